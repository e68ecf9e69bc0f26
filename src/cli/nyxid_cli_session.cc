#include "cli/nyxid_cli_session.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "base/api_error.h"
#include "base/json_read.h"
#include "cli/server_replies.h"
#include "os/atomic_file.h"

namespace aevatar::cli {
namespace {

constexpr char kSessionFile[] = "session.json";
// The Status payload holding the broker's problem as ProblemObject's JSON.
constexpr char kProblemPayload[] = "type.aevatar/cli.problem";

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

std::string TrimSlash(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

std::optional<nlohmann::json> LoadSession() {
  std::ifstream in(NyxidConfigDir() + "/" + kSessionFile);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  auto doc = base::ParseJsonObject(text.str());
  if (!doc.ok()) return std::nullopt;
  return *std::move(doc);
}

}  // namespace

std::string NyxidConfigDir() {
  std::string base = Env("XDG_CONFIG_HOME");
  if (base.empty()) base = Env("HOME") + "/.config";
  return base + "/nyxid";
}

absl::Status SaveNyxidLogin(const std::string& url, const std::string& access_token,
                            int64_t expires_at_unix) {
  const std::string dir = NyxidConfigDir();
  if (absl::Status st = os::MakeDirectories(dir, 0700); !st.ok()) return st;
  const std::string text =
      nlohmann::json{{"url", url}, {"access_token", access_token}, {"expires_at", expires_at_unix}}
          .dump() +
      "\n";
  return os::WriteFileAtomically(dir + "/" + kSessionFile, text, 0600);
}

absl::StatusOr<std::string> ResolveNyxidUrl(const NyxidGlobalOptions& options) {
  for (const std::string& candidate : {options.url, Env("NYXID_URL"), Env("NYXID_BASE_URL")}) {
    if (!candidate.empty()) return TrimSlash(candidate);
  }
  if (auto session = LoadSession(); session) {
    if (std::string url = base::StringOr(*session, "url", ""); !url.empty()) return TrimSlash(url);
  }
  return absl::FailedPreconditionError("no broker URL: pass --url or set NYXID_URL");
}

absl::StatusOr<NyxidSession> ResolveNyxidSession(const NyxidGlobalOptions& options) {
  auto url = ResolveNyxidUrl(options);
  if (!url.ok()) return url.status();
  NyxidSession session{*url, ""};
  if (auto saved = LoadSession(); saved && base::StringOr(*saved, "access_token", "") != "") {
    session.credential = base::StringOr(*saved, "access_token", "");
  } else {
    session.credential = Env("NYXID_API_KEY");
  }
  if (session.credential.empty()) {
    return absl::FailedPreconditionError("not logged in: run `nyxid login` or set NYXID_API_KEY");
  }
  return session;
}

absl::StatusOr<nlohmann::json> NyxidCall(const NyxidSession& session, const std::string& method,
                                         const std::string& path,
                                         const std::optional<nlohmann::json>& body,
                                         std::chrono::milliseconds timeout) {
  http::ClientRequest request;
  request.method = method;
  request.timeout = timeout;
  request.url = session.url + path;
  request.tls = session.tls;
  if (!session.credential.empty()) {
    request.headers.Set("Authorization", "Bearer " + session.credential);
  }
  if (body) {
    request.body = body->dump();
    request.headers.Set("Content-Type", "application/json");
  }
  request.headers.Set("Accept", "application/json");
  auto response = http::Fetch(request);
  if (!response.ok()) {
    return absl::UnavailableError(
        absl::StrCat("cannot reach ", session.url, ": ", std::string(response.status().message())));
  }
  if (response->status >= 400) {
    absl::Status error(
        response->status == 401 ? absl::StatusCode::kUnauthenticated : absl::StatusCode::kUnknown,
        ProblemSummary(response->status, response->body));
    error.SetPayload(kProblemPayload,
                     absl::Cord(ProblemObject(response->status, response->body).dump()));
    return error;
  }
  if (response->body.empty()) return nlohmann::json::object();
  // Every answer this CLI asks for is an object; callers read its members
  // with json_read's typed accessors.
  auto doc = base::ParseJsonObject(response->body);
  if (!doc.ok())
    return absl::InternalError("the broker answered with something other than a JSON object");
  return doc;
}

int ReportNyxidError(const absl::Status& status, bool as_json) {
  std::cerr << "nyxid: " << status.message() << "\n";
  if (!as_json) return 1;
  nlohmann::json problem;
  if (auto payload = status.GetPayload(kProblemPayload); payload.has_value()) {
    problem = base::ParseJsonObject(std::string(*payload)).value_or(nlohmann::json());
  }
  if (!problem.is_object()) {
    problem = LocalProblemObject(base::ApiCode(status), std::string(status.message()));
  }
  std::cout << problem.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  return 1;
}

}  // namespace aevatar::cli
