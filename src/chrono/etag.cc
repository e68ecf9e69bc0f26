#include "chrono/etag.h"

#include "base/crypto.h"

namespace aevatar::chrono {
namespace {

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::string_view Opaque(std::string_view tag) {
  tag = Trim(tag);
  if (tag.substr(0, 2) == "W/") tag.remove_prefix(2);
  return tag;
}

}  // namespace

std::string StrongETag(std::string_view representation) {
  return "\"" + base::Sha256Hex(representation).substr(0, 32) + "\"";
}

bool IfNoneMatchHits(std::string_view header, std::string_view etag) {
  const std::string_view ours = Opaque(etag);
  while (!header.empty()) {
    size_t comma = header.find(',');
    std::string_view item = Trim(header.substr(0, comma));
    if (item == "*" || (!item.empty() && Opaque(item) == ours)) return true;
    if (comma == std::string_view::npos) break;
    header.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace aevatar::chrono
