#ifndef AEVATAR_METRICS_TEXT_FORMAT_H_
#define AEVATAR_METRICS_TEXT_FORMAT_H_

// The pieces of the Prometheus text exposition format (version 0.0.4) the
// registry writes: escaping, number spelling, and header lines.

#include <string>
#include <string_view>
#include <vector>

namespace aevatar::metrics {

// A label value with `\`, `"` and newline escaped as the format requires.
std::string EscapeLabelValue(std::string_view value);

// HELP text with `\` and newline escaped.
std::string EscapeHelp(std::string_view help);

// A sample value: integers without a fraction, "+Inf"/"-Inf"/"NaN", else the
// shortest round-tripping decimal.
std::string FormatValue(double value);

// Appends "# HELP name help\n# TYPE name type\n".
void AppendHeader(std::string& out, std::string_view name, std::string_view help,
                  std::string_view type);

// Appends `name{l1="v1",…} value\n` (no braces when there are no labels);
// `extra_name`/`extra_value` add one more label at the end when non-empty
// (a histogram's `le`).
void AppendSample(std::string& out, std::string_view name, const std::vector<std::string>& labels,
                  const std::vector<std::string>& values, double value,
                  std::string_view extra_name = "", std::string_view extra_value = "");

}  // namespace aevatar::metrics

#endif  // AEVATAR_METRICS_TEXT_FORMAT_H_
