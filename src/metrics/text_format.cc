#include "metrics/text_format.h"

#include <charconv>
#include <cmath>

namespace aevatar::metrics {

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string EscapeHelp(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // Counts are whole numbers below 2^53: spell them without an exponent.
  if (value == std::floor(value) && std::fabs(value) < 9007199254740992.0) {
    return std::to_string(static_cast<int64_t>(value));
  }
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  if (ec != std::errc()) return "NaN";
  return std::string(buffer, end);
}

void AppendHeader(std::string& out, std::string_view name, std::string_view help,
                  std::string_view type) {
  out.append("# HELP ").append(name).append(" ").append(EscapeHelp(help)).append("\n");
  out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
}

void AppendSample(std::string& out, std::string_view name, const std::vector<std::string>& labels,
                  const std::vector<std::string>& values, double value, std::string_view extra_name,
                  std::string_view extra_value) {
  out.append(name);
  const bool any = !labels.empty() || !extra_name.empty();
  if (any) out.push_back('{');
  bool first = true;
  auto label = [&](std::string_view key, std::string_view val) {
    if (!first) out.push_back(',');
    first = false;
    out.append(key).append("=\"").append(EscapeLabelValue(val)).append("\"");
  };
  for (size_t i = 0; i < labels.size(); ++i) label(labels[i], i < values.size() ? values[i] : "");
  if (!extra_name.empty()) label(extra_name, extra_value);
  if (any) out.push_back('}');
  out.append(" ").append(FormatValue(value)).append("\n");
}

}  // namespace aevatar::metrics
