#ifndef AEVATAR_CLI_AEVATAR_SESSION_H_
#define AEVATAR_CLI_AEVATAR_SESSION_H_

#include <string>

#include "absl/status/statusor.h"
#include "http/client.h"
#include "nlohmann/json.hpp"

namespace aevatar::cli {

// The CLI's login state: which aevatar to talk to and the NyxID access token,
// kept in $XDG_CONFIG_HOME/aevatar/session.json (default ~/.config), 0600.
// AEVATAR_URL and AEVATAR_TOKEN override it.
struct AevatarSession {
  std::string url;
  std::string token;
};

std::string SessionPath();
absl::Status SaveSession(const AevatarSession& session);
// Loads the session; `url_override` (non-empty) wins over the stored URL.
absl::StatusOr<AevatarSession> LoadSession(const std::string& url_override);

// One call to aevatar with the session's token. Status 0 means the exchange
// failed (the message is in the body).
http::ClientResponse CallAevatar(const AevatarSession& session, const std::string& method,
                                 const std::string& path, const std::string& body = "",
                                 std::chrono::milliseconds timeout = std::chrono::seconds(60),
                                 const http::Headers& extra_headers = {});

// Prints a problem+json error as "error: CODE: detail", its remediation and
// diagnostic id, to stderr. Returns 1.
int PrintProblem(const http::ClientResponse& response);

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_AEVATAR_SESSION_H_
