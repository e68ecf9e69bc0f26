#ifndef AEVATAR_CLI_CONFIG_RUNTIMES_H_
#define AEVATAR_CLI_CONFIG_RUNTIMES_H_

// The `[runtimes.NAME]` tables of a serve's config file (docs/configuration.md):
//
//   [runtimes.python-data]
//   language = "python"
//   root = "/var/lib/aevatar/runtimes/python-data"
//
// Each table becomes one `--runtime NAME=LANGUAGE:ROOT` argument (just
// `NAME=LANGUAGE` without a root), in the file's line order; the serve's
// `--runtime` flag then checks it as it checks a command-line one.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "cpptoml.h"

namespace aevatar::cli {

// The top-level key of the runtime tables, and the flag they feed.
inline constexpr char kRuntimesTable[] = "runtimes";
inline constexpr char kRuntimeFlag[] = "--runtime";

// Returns the `--runtime` arguments for the `runtimes` table of the TOML
// `text` read from `path`. InvalidArgument, naming `path` and the line of
// the offending `[runtimes.NAME]` header: an entry that is not a table, a
// key other than language and root, a value that is not a string, a
// missing language.
absl::StatusOr<std::vector<std::string>> RuntimeTableArgs(const cpptoml::table& runtimes,
                                                          std::string_view text,
                                                          const std::string& path);

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_CONFIG_RUNTIMES_H_
