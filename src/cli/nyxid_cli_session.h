#ifndef AEVATAR_CLI_NYXID_CLI_SESSION_H_
#define AEVATAR_CLI_NYXID_CLI_SESSION_H_

#include <chrono>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "http/client.h"
#include "nlohmann/json.hpp"

// How the nyxid client commands find the broker and their credential.
//
// URL: --url, else $NYXID_URL, else $NYXID_BASE_URL, else the URL saved by
// `nyxid login`.
// Credential: the access token saved by `nyxid login` in
// $XDG_CONFIG_HOME/nyxid/session.json (default ~/.config/nyxid; directory
// 0700, file 0600), else $NYXID_API_KEY (what a sandboxed program is given).
// Credentials are never printed except an Agent Key at its creation.
namespace aevatar::cli {

struct NyxidGlobalOptions {
  std::string url;
  std::string output = "table";  // "table" or "json" (`--json`)
  // True when the command prints one JSON document (`--json`/`--output json`).
  bool json() const { return output == "json"; }
};

struct NyxidSession {
  std::string url;
  std::string credential;
  // An https URL's trust besides the system store (and $SSL_CERT_FILE,
  // which OpenSSL reads): `nyxid node register --ca-file`.
  http::ClientTls tls = {};
};

// The config directory ($XDG_CONFIG_HOME/nyxid or ~/.config/nyxid).
std::string NyxidConfigDir();

// Saves a login (0600 file in a 0700 directory, written atomically).
absl::Status SaveNyxidLogin(const std::string& url, const std::string& access_token,
                            int64_t expires_at_unix);

// Resolves the broker URL only (for login).
absl::StatusOr<std::string> ResolveNyxidUrl(const NyxidGlobalOptions& options);

// Resolves URL and credential; FailedPrecondition when not logged in.
absl::StatusOr<NyxidSession> ResolveNyxidSession(const NyxidGlobalOptions& options);

// One JSON exchange with the broker (`timeout`, 15 s unless given). Returns the answer, a
// JSON object (an empty body is {}); an answer that is not an object is
// Internal. A problem+json answer becomes an error "CODE: detail (HTTP n,
// diagnostic_id …)", carrying the problem (ProblemObject) for `--json`.
absl::StatusOr<nlohmann::json> NyxidCall(
    const NyxidSession& session, const std::string& method, const std::string& path,
    const std::optional<nlohmann::json>& body = std::nullopt,
    std::chrono::milliseconds timeout = std::chrono::seconds(15));

// Prints `status` as "nyxid: <message>" on stderr; with `as_json` also one
// JSON problem object on stdout, so a `--json` caller always gets a document:
// the broker's problem (code, detail, status, diagnostic_id) when the error
// came from it, else {"code": base::ApiCode, "detail", "diagnostic_id": null}
// for a failure on this side. Returns the exit code 1.
int ReportNyxidError(const absl::Status& status, bool as_json = false);

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_NYXID_CLI_SESSION_H_
