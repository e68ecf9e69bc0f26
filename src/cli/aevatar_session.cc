#include "cli/aevatar_session.h"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "base/json_read.h"
#include "cli/server_replies.h"
#include "os/atomic_file.h"

namespace aevatar::cli {
namespace {

std::string ConfigDir() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) {
    return std::string(xdg) + "/aevatar";
  }
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/root") + "/.config/aevatar";
}

}  // namespace

std::string SessionPath() { return ConfigDir() + "/session.json"; }

absl::Status SaveSession(const AevatarSession& session) {
  const std::string dir = ConfigDir();
  if (absl::Status st = os::MakeDirectories(dir, 0700); !st.ok()) return st;
  const std::string text = nlohmann::json{{"url", session.url}, {"token", session.token}}.dump();
  return os::WriteFileAtomically(SessionPath(), text, 0600);
}

absl::StatusOr<AevatarSession> LoadSession(const std::string& url_override) {
  AevatarSession session;
  std::ifstream in(SessionPath());
  if (in) {
    std::ostringstream text;
    text << in.rdbuf();
    if (auto stored = base::ParseJsonObject(text.str()); stored.ok()) {
      session.url = base::StringOr(*stored, "url", "");
      session.token = base::StringOr(*stored, "token", "");
    }
  }
  if (const char* url = std::getenv("AEVATAR_URL"); url && *url) session.url = url;
  if (const char* token = std::getenv("AEVATAR_TOKEN"); token && *token) session.token = token;
  if (!url_override.empty()) session.url = url_override;
  if (session.url.empty()) {
    return absl::FailedPreconditionError("no aevatar URL: run `aevatar login --url URL` first");
  }
  if (session.token.empty()) {
    return absl::FailedPreconditionError("not logged in: run `aevatar login` first");
  }
  return session;
}

http::ClientResponse CallAevatar(const AevatarSession& session, const std::string& method,
                                 const std::string& path, const std::string& body,
                                 std::chrono::milliseconds timeout,
                                 const http::Headers& extra_headers) {
  http::ClientRequest request;
  request.method = method;
  request.url = session.url + path;
  request.timeout = timeout;
  request.body = body;
  request.headers = extra_headers;
  if (!body.empty()) request.headers.Set("Content-Type", "application/json");
  request.headers.Set("Authorization", "Bearer " + session.token);
  auto response = http::Fetch(request);
  if (!response.ok()) return {0, {}, std::string(response.status().message())};
  return *response;
}

int PrintProblem(const http::ClientResponse& response) {
  if (response.status == 0) {
    std::cerr << "error: cannot reach aevatar: " << response.body << "\n";
    return 1;
  }
  std::cerr << DescribeProblem(response.status, response.body);
  return 1;
}

}  // namespace aevatar::cli
