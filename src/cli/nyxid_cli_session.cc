#include "cli/nyxid_cli_session.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace aevatar::cli {
namespace {

constexpr char kSessionFile[] = "session.json";

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
  nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, false);
  if (!doc.is_object()) return std::nullopt;
  return doc;
}

absl::Status MakeDirs(const std::string& path) {
  std::string partial;
  for (size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || (path[i] == '/' && i > 0)) {
      partial = path.substr(0, i);
      if (::mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST) {
        return absl::UnavailableError(absl::StrCat("mkdir ", partial, ": ", std::strerror(errno)));
      }
    }
  }
  return absl::OkStatus();
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
  if (absl::Status st = MakeDirs(dir); !st.ok()) return st;
  ::chmod(dir.c_str(), 0700);
  const std::string path = dir + "/" + kSessionFile;
  const std::string temp = path + ".tmp";
  const std::string text =
      nlohmann::json{{"url", url}, {"access_token", access_token}, {"expires_at", expires_at_unix}}
          .dump() +
      "\n";
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    return absl::UnavailableError(absl::StrCat("open ", temp, ": ", std::strerror(errno)));
  ::fchmod(fd, 0600);
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ok = ::fsync(fd) == 0 && ok;
  ok = ::close(fd) == 0 && ok;
  if (!ok || ::rename(temp.c_str(), path.c_str()) != 0) {
    ::unlink(temp.c_str());
    return absl::UnavailableError(absl::StrCat("cannot write ", path));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ResolveNyxidUrl(const NyxidGlobalOptions& options) {
  for (const std::string& candidate : {options.url, Env("NYXID_URL"), Env("NYXID_BASE_URL")}) {
    if (!candidate.empty()) return TrimSlash(candidate);
  }
  if (auto session = LoadSession(); session && (*session)["url"].is_string()) {
    return TrimSlash((*session)["url"].get<std::string>());
  }
  return absl::FailedPreconditionError("no broker URL: pass --url or set NYXID_URL");
}

absl::StatusOr<NyxidSession> ResolveNyxidSession(const NyxidGlobalOptions& options) {
  auto url = ResolveNyxidUrl(options);
  if (!url.ok()) return url.status();
  NyxidSession session{*url, ""};
  if (auto saved = LoadSession(); saved && (*saved)["access_token"].is_string()) {
    session.credential = (*saved)["access_token"].get<std::string>();
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
                                         const std::optional<nlohmann::json>& body) {
  http::ClientRequest request;
  request.method = method;
  request.url = session.url + path;
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
  nlohmann::json doc = response->body.empty()
                           ? nlohmann::json::object()
                           : nlohmann::json::parse(response->body, nullptr, false);
  if (response->status >= 400) {
    std::string code = doc.is_object() ? doc.value("code", "HTTP_ERROR") : "HTTP_ERROR";
    std::string detail = doc.is_object() ? doc.value("detail", "") : "";
    std::string diagnostic = doc.is_object() ? doc.value("diagnostic_id", "") : "";
    return absl::Status(
        response->status == 401 ? absl::StatusCode::kUnauthenticated : absl::StatusCode::kUnknown,
        absl::StrCat(code, ": ", detail, " (HTTP ", response->status,
                     diagnostic.empty() ? "" : ", diagnostic_id " + diagnostic, ")"));
  }
  if (doc.is_discarded()) return absl::InternalError("the broker answered with invalid JSON");
  return doc;
}

int ReportNyxidError(const absl::Status& status) {
  std::cerr << "nyxid: " << status.message() << "\n";
  return 1;
}

}  // namespace aevatar::cli
