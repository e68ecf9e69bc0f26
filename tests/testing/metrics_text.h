#ifndef AEVATAR_TESTS_TESTING_METRICS_TEXT_H_
#define AEVATAR_TESTS_TESTING_METRICS_TEXT_H_

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace aevatar::testing {

// The value on the line of a Prometheus text exposition that names
// `series` exactly as rendered (labels included, e.g.
// `x_total{route="/a",status="200"}`); nullopt when no line does.
inline std::optional<double> SeriesValue(std::string_view text, std::string_view series) {
  const std::string prefix = std::string(series) + " ";
  for (size_t line = 0; line < text.size();) {
    const size_t end = std::min(text.find('\n', line), text.size());
    if (text.substr(line, end - line).starts_with(prefix)) {
      return std::strtod(
          std::string(text.substr(line + prefix.size(), end - line - prefix.size())).c_str(),
          nullptr);
    }
    line = end + 1;
  }
  return std::nullopt;
}

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_TESTING_METRICS_TEXT_H_
