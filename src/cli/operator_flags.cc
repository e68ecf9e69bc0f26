#include "cli/operator_flags.h"

#include "absl/strings/ascii.h"
#include "base/log_context.h"
#include "cli/read_file.h"

namespace aevatar::cli {

void AddLogFormatFlag(CLI::App* command) {
  CLI::Option* format =
      command
          ->add_option_function<std::string>(
              "--log-format",
              [](const std::string& format) {
                base::SetLogFormat(format == "text" ? base::LogFormat::kText
                                                    : base::LogFormat::kJson);
              },
              "json (default: one JSON object per line) or text (one readable line per event)")
          ->check(CLI::IsMember({"json", "text"}));
  // A server prints no result document: its `--json` is its log's shape.
  command
      ->add_flag_callback(
          "--json", [] { base::SetLogFormat(base::LogFormat::kJson); },
          "Same as --log-format json: every log line (stderr) one JSON object")
      ->excludes(format);
}

void AddOperatorFlags(CLI::App* serve, std::string* metrics_token) {
  AddLogFormatFlag(serve);
  serve->add_option_function<std::string>(
      "--metrics-token-file",
      [metrics_token](const std::string& path) {
        std::string text;
        if (!ReadWholeFile(path, text)) {
          throw CLI::ValidationError("--metrics-token-file", "cannot read " + path);
        }
        *metrics_token = std::string(absl::StripTrailingAsciiWhitespace(text));
        if (metrics_token->empty()) {
          throw CLI::ValidationError("--metrics-token-file", path + " is empty");
        }
      },
      "file holding the bearer token that reads /metrics (default: loopback peers only)");
}

}  // namespace aevatar::cli
