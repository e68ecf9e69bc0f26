#include "store/store_spec.h"

namespace aevatar::store {

std::optional<std::string> PostgresConninfo(std::string_view spec) {
  if (spec.starts_with("postgresql://") || spec.starts_with("postgres://")) {
    return std::string(spec);
  }
  constexpr std::string_view kPrefix = "postgres:";
  if (spec.starts_with(kPrefix)) return std::string(spec.substr(kPrefix.size()));
  return std::nullopt;
}

}  // namespace aevatar::store
