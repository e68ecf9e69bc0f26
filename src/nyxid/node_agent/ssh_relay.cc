#include "nyxid/node_agent/ssh_relay.h"

#include <stdlib.h>
#include <unistd.h>

#include <set>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/api_error.h"
#include "base/json_read.h"
#include "nyxid/node_agent/tool_run.h"
#include "nyxid/nodes/ssh_command_profile.h"
#include "os/atomic_file.h"

namespace aevatar::nyxid::node {
namespace {

using nlohmann::json;

constexpr size_t kMaxOutputBytes = 1 << 20;
constexpr size_t kMaxKnownHostsBytes = 1 << 20;
// ssh's own connect bound, and what the node adds to the run's timeout for
// connecting and the wrapper's kill grace before it kills ssh.
constexpr int kConnectTimeoutSecs = 15;
constexpr std::chrono::seconds kSshGrace{20};

json Refusal(const std::string& code, const std::string& detail) {
  return {{"type", "ssh_error"}, {"code", code}, {"detail", detail}};
}

// known_hosts names a host on port 22 bare, else as "[host]:port".
std::string KnownHostsName(const std::string& host, int port) {
  return port == 22 ? host : absl::StrCat("[", host, "]:", port);
}

// The lines of known_hosts-formatted `text` for `name`, as "type key".
std::set<std::string> KeysFor(const std::string& text, const std::string& name) {
  std::set<std::string> keys;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::vector<std::string> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (fields.size() >= 3 && fields[0] == name) keys.insert(fields[1] + " " + fields[2]);
  }
  return keys;
}

// A private key in a 0600 file of the profile's 0700 run directory, removed
// when this goes out of scope; ssh takes keys only from files.
class KeyFile {
 public:
  static absl::StatusOr<std::unique_ptr<KeyFile>> Write(const NodeProfile& profile,
                                                        const std::string& key) {
    const std::string dir = profile.dir + "/run";
    if (absl::Status st = os::MakeDirectories(dir, 0700); !st.ok()) return st;
    std::string path = dir + "/key-XXXXXX";
    const int fd = ::mkstemp(path.data());
    if (fd < 0) return absl::UnavailableError("cannot create a key file in " + dir);
    auto file = std::unique_ptr<KeyFile>(new KeyFile(path));
    size_t written = 0;
    while (written < key.size()) {
      const ssize_t n = ::write(fd, key.data() + written, key.size() - written);
      if (n <= 0) break;
      written += static_cast<size_t>(n);
    }
    ::close(fd);
    if (written != key.size()) return absl::UnavailableError("cannot write the key file");
    return file;
  }
  ~KeyFile() { ::unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  explicit KeyFile(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// ssh exits 255 for its own failures; its message says which.
std::optional<json> SshFailure(const ToolRun& run) {
  if (run.exit_code != 255) return std::nullopt;
  if (absl::StrContains(run.err, "REMOTE HOST IDENTIFICATION HAS CHANGED") ||
      absl::StrContains(run.err, "Host key verification failed")) {
    return Refusal("SSH_HOST_KEY_MISMATCH",
                   "the target's host key differs from the pinned one; nothing ran. Verify the "
                   "host, then: nyxid node ssh-credentials rotate-host-key");
  }
  if (absl::StrContains(run.err, "Permission denied")) {
    return Refusal("SSH_AUTH_FAILED", "the target refused the node's key for this principal");
  }
  for (const char* connect : {"Connection refused", "Connection timed out", "No route to host",
                              "Could not resolve", "Connection closed", "Network is unreachable"}) {
    if (absl::StrContains(run.err, connect)) {
      return Refusal("SSH_CONNECT_FAILED", "the node could not connect to the SSH target");
    }
  }
  return std::nullopt;
}

}  // namespace

json RunSshExec(const NodeProfile& profile, const NodeSecrets& secrets, const json& request) {
  const json& service = base::ObjectOrEmpty(request, "service");
  const std::string host = base::StringOr(request, "host", "");
  const int port = static_cast<int>(base::IntOr(request, "port", 0));
  const std::string principal = base::StringOr(request, "principal", "");
  const std::string command = base::StringOr(request, "command", "");
  const std::string input = base::StringOr(request, "stdin", "");
  const std::optional<int> timeout_secs = ParseAevatarSshCommand(command);
  if (!timeout_secs || host.empty() || port < 1 || port > 65535 || principal.empty() ||
      input.size() > kMaxSshStdinBytes) {
    return Refusal("SSH_COMMAND_REFUSED", "this node runs only the Aevatar command profile");
  }
  if (!profile.AllowsTarget(host, port)) {
    return Refusal("SSH_TARGET_NOT_ALLOWED",
                   "the target is not in this node profile's [ssh].allowed_targets");
  }
  const SshCredential* credential = secrets.Find(base::StringOr(service, "id", ""),
                                                 base::StringOr(service, "slug", ""), principal);
  if (credential == nullptr || credential->host != host || credential->port != port) {
    return Refusal("SSH_KEY_UNAVAILABLE",
                   "this node holds no key for the service, principal and target "
                   "(nyxid node ssh-credentials add)");
  }
  auto pinned = os::ReadSmallFile(profile.KnownHostsPath(), kMaxKnownHostsBytes);
  if (!pinned.ok() || KeysFor(*pinned, KnownHostsName(host, port)).empty()) {
    return Refusal("SSH_KEY_UNAVAILABLE", "no host key is pinned for the target");
  }
  auto key = KeyFile::Write(profile, credential->private_key);
  if (!key.ok()) return Refusal("SSH_KEY_UNAVAILABLE", "the node cannot stage its key");
  const std::vector<std::string> argv = {
      "ssh",       "-F",
      "/dev/null", "-T",
      "-o",        "BatchMode=yes",
      "-o",        "StrictHostKeyChecking=yes",
      "-o",        "UserKnownHostsFile=" + profile.KnownHostsPath(),
      "-o",        "GlobalKnownHostsFile=/dev/null",
      "-o",        "IdentitiesOnly=yes",
      "-o",        "IdentityAgent=none",
      "-o",        "LogLevel=ERROR",
      "-o",        absl::StrCat("ConnectTimeout=", kConnectTimeoutSecs),
      "-i",        (*key)->path(),
      "-p",        std::to_string(port),
      "-l",        principal,
      "--",        host,
      command};
  auto run = RunTool(argv, input, std::chrono::seconds(*timeout_secs) + kSshGrace, kMaxOutputBytes);
  if (!run.ok()) return Refusal("SSH_CONNECT_FAILED", "the node cannot run its ssh client");
  if (std::optional<json> failure = SshFailure(*run)) return *failure;
  return {{"type", "ssh_result"},
          {"exit_code", run->exit_code},
          {"timed_out", run->timed_out || run->exit_code == 124},
          {"stdout", run->out},
          {"stderr", run->err}};
}

absl::StatusOr<std::string> PinHostKey(const NodeProfile& profile, const std::string& host,
                                       int port, bool rotate) {
  auto scan = RunTool({"ssh-keyscan", "-T", "10", "-p", std::to_string(port), "--", host}, "",
                      std::chrono::seconds(20), kMaxKnownHostsBytes);
  if (!scan.ok()) return scan.status();
  const std::string name = KnownHostsName(host, port);
  const std::set<std::string> scanned = KeysFor(scan->out, name);
  if (scanned.empty()) {
    return base::ApiError(absl::StatusCode::kUnavailable, "SSH_CONNECT_FAILED",
                          "ssh-keyscan read no host key from " + name, 502);
  }
  auto existing = os::ReadSmallFile(profile.KnownHostsPath(), kMaxKnownHostsBytes);
  if (!existing.ok() && !absl::IsNotFound(existing.status())) return existing.status();
  const std::string current = existing.ok() ? *existing : "";
  const std::set<std::string> pinned = KeysFor(current, name);
  if (!pinned.empty() && pinned != scanned && !rotate) {
    return base::ApiError(absl::StatusCode::kFailedPrecondition, "SSH_HOST_KEY_MISMATCH",
                          "the target's host key differs from the pinned one; verify the host, "
                          "then: nyxid node ssh-credentials rotate-host-key",
                          409);
  }
  std::string text;
  for (absl::string_view line : absl::StrSplit(current, '\n', absl::SkipEmpty())) {
    std::vector<std::string> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (!fields.empty() && fields[0] == name) continue;
    absl::StrAppend(&text, line, "\n");
  }
  std::vector<std::string> types;
  for (const std::string& key : scanned) {
    absl::StrAppend(&text, name, " ", key, "\n");
    types.push_back(key.substr(0, key.find(' ')));
  }
  if (absl::Status st = os::WriteFileAtomically(profile.KnownHostsPath(), text, 0600); !st.ok()) {
    return st;
  }
  return absl::StrJoin(types, ", ");
}

}  // namespace aevatar::nyxid::node
