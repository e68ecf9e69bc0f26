#ifndef AEVATAR_CLI_SERVER_REPLIES_H_
#define AEVATAR_CLI_SERVER_REPLIES_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

// How the CLIs read what a server sent back: problem+json errors, the exec
// result, and the `aevatar up` credentials file. A server (or a file) that
// sends a member of another type gets a plainer message or a typed error,
// never an uncaught nlohmann exception that aborts the CLI. Pure functions.
namespace aevatar::cli {

// A reply body as JSON, or null when it is not JSON: every read of it is a
// typed json_read accessor, so null reads as "absent".
nlohmann::json ParsedOrNull(std::string_view body);

// "error: CODE: detail\n" then "remediation: …\n" when there is one and
// "diagnostic id: …\n", for an error reply with `http_status` and `body`.
// A body that is not problem+json gives "error: HTTP <status>\n".
std::string DescribeProblem(int http_status, std::string_view body);

// "CODE: detail (HTTP <status>, diagnostic_id …)" on one line, for errors
// that are carried in a Status message (nyxid's client commands).
std::string ProblemSummary(int http_status, std::string_view body);

// The problem of an error reply as one JSON object for `--json` output:
// {"code", "detail", "status", "diagnostic_id"} and "remediation" when there
// is one, each read through base::ParseProblemJson (so only sanitised values
// pass). A body that is not problem+json gives code "HTTP_ERROR", an empty
// detail and a null diagnostic_id.
nlohmann::json ProblemObject(int http_status, std::string_view body);

// The problem object of a failure on the CLI's own side (no server was
// asked, so no diagnostic id): {"code", "detail", "diagnostic_id": null}.
nlohmann::json LocalProblemObject(std::string code, std::string detail);

// The exit code of `aevatar exec` for a code_execute result: 124 when the
// program timed out, else its exit code when that is an integer in 0..255,
// else 1.
int ExecExitCode(const nlohmann::json& result);

// "aevatar exec: VERDICT, exit code N, diagnostic id D\n" for a
// code_execute result that did not succeed (success false, a timeout, or a
// non-zero exit code); "" for one that did. Fields that are absent or of
// another type are left out.
std::string ExecFailureSummary(const nlohmann::json& result);

// The secrets and URLs `aevatar up` keeps in credentials.json.
struct StackCredentials {
  std::string operator_password;
  std::string demo_password;
  std::string introspection_secret;
  std::string nyxid_url;   // http://host:port
  std::string chrono_url;  // http://host:port
  std::string aevatar_url;
};

// Reads credentials.json's document: {"operator": {"password"}, "demo":
// {"password"}, "introspection_secret", "nyxid_url", "chrono_url",
// "aevatar_url"}, every value a non-empty string and every URL http://.
// DataLoss naming the field (never a value) otherwise.
absl::StatusOr<StackCredentials> ParseStackCredentials(const nlohmann::json& document);

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_SERVER_REPLIES_H_
