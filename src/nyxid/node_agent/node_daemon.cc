#include "nyxid/node_agent/node_daemon.h"

#include <unistd.h>

#include <algorithm>
#include <thread>

#include "base/clock.h"
#include "base/json_read.h"
#include "base/log.h"
#include "nyxid/node_agent/ssh_relay.h"
#include "os/atomic_file.h"

namespace aevatar::nyxid::node {
namespace {

constexpr std::chrono::milliseconds kFirstBackoff{1000};
constexpr std::chrono::milliseconds kMaxBackoff{30000};
constexpr std::chrono::milliseconds kConnectTimeout{10000};

// Answers one request on its own thread.
void AnswerExec(const std::string& profile_name, std::shared_ptr<http::WebSocket> socket,
                nlohmann::json request, std::atomic<int>* running) {
  const std::string request_id = base::StringOr(request, "request_id", "");
  const int64_t start_ms = base::NowUnixMs();
  nlohmann::json answer;
  auto profile = LoadNodeProfile(profile_name);
  auto secrets =
      profile.ok() ? LoadNodeSecrets(*profile) : absl::StatusOr<NodeSecrets>(profile.status());
  if (!profile.ok() || !secrets.ok()) {
    answer = {{"type", "ssh_error"},
              {"code", "SSH_KEY_UNAVAILABLE"},
              {"detail", "the node cannot read its profile or credentials"}};
  } else {
    answer = RunSshExec(*profile, *secrets, request);
  }
  // One line a request: never the prompt, the output or a key.
  base::Log(base::LogLevel::kInfo, "node.ssh_exec", "",
            {{"request_id", request_id},
             {"answer", base::StringOr(answer, "type", "")},
             {"code", base::StringOr(answer, "code", "")},
             {"exit_code", base::IntOr(answer, "exit_code", -1)},
             {"ms", base::NowUnixMs() - start_ms}});
  answer["request_id"] = request_id;
  socket->Write(answer.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  --*running;
}

}  // namespace

int NodeDaemon::Run() {
  auto profile = LoadNodeProfile(profile_);
  auto secrets =
      profile.ok() ? LoadNodeSecrets(*profile) : absl::StatusOr<NodeSecrets>(profile.status());
  if (!profile.ok() || !secrets.ok()) {
    base::Log(
        base::LogLevel::kError, "node.profile_unreadable", "",
        {{"error", std::string((profile.ok() ? secrets.status() : profile.status()).message())}});
    return 1;
  }
  state_path_ = profile->StatePath();
  node_id_ = profile->node_id;
  http::Headers headers;
  headers.Set("Authorization", "Bearer " + secrets->node_secret);
  std::chrono::milliseconds backoff = kFirstBackoff;
  while (!stopping_) {
    WriteState("connecting", "");
    auto socket = http::ConnectWebSocket(
        profile->server_url, headers, kConnectTimeout, {},
        http::ClientTls{.ca_file = profile->server_ca_file, .cert_file = {}, .key_file = {}});
    if (socket.ok()) {
      std::shared_ptr<http::WebSocket> shared(std::move(*socket));
      {
        absl::MutexLock lock(&mu_);
        current_ = shared;
      }
      if (!stopping_) Serve(shared);
      absl::MutexLock lock(&mu_);
      current_.reset();
      backoff = kFirstBackoff;  // it was connected: the next try starts over
      if (stopping_) break;
      WriteState("reconnecting", "the connection to NyxID ended");
    } else {
      WriteState("reconnecting", std::string(socket.status().message()));
      base::Log(base::LogLevel::kWarn, "node.connect_failed", "",
                {{"error", std::string(socket.status().message())}, {"retry_ms", backoff.count()}});
    }
    if (!SleepUnlessStopped(backoff)) break;
    backoff = std::min(backoff * 2, kMaxBackoff);
  }
  WriteState("stopped", "");
  // Requests in flight answer into a closed connection; give them a moment.
  for (int i = 0; i < 50 && running_execs_ > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return 0;
}

void NodeDaemon::Serve(const std::shared_ptr<http::WebSocket>& socket) {
  auto welcome = socket->Read();
  if (!welcome.ok()) return;
  auto hello = base::ParseJsonObject(*welcome);
  if (!hello.ok() || base::StringOr(*hello, "type", "") != "welcome") return;
  WriteState("online", "");
  base::Log(base::LogLevel::kInfo, "node.connected", "", {{"node_id", node_id_}});
  while (!stopping_) {
    auto message = socket->Read();
    if (!message.ok()) break;
    auto request = base::ParseJsonObject(*message);
    if (!request.ok() || base::StringOr(*request, "type", "") != "ssh_exec") continue;
    if (running_execs_.fetch_add(1) >= kMaxConcurrentExecs) {
      --running_execs_;
      nlohmann::json busy = {{"type", "ssh_error"},
                             {"code", "SSH_CONNECT_FAILED"},
                             {"detail", "the node is running its maximum of requests"},
                             {"request_id", base::StringOr(*request, "request_id", "")}};
      socket->Write(busy.dump());
      continue;
    }
    std::thread(AnswerExec, profile_, socket, std::move(*request), &running_execs_).detach();
  }
  base::Log(base::LogLevel::kInfo, "node.disconnected", "", {{"node_id", node_id_}});
}

void NodeDaemon::Stop() {
  stopping_ = true;
  std::shared_ptr<http::WebSocket> current;
  {
    absl::MutexLock lock(&mu_);
    current = current_;
  }
  if (current) current->Close();
}

void NodeDaemon::WriteState(const std::string& state, const std::string& last_error) {
  nlohmann::json doc = {{"state", state},
                        {"since_ms", base::NowUnixMs()},
                        {"node_id", node_id_},
                        {"pid", static_cast<int64_t>(::getpid())}};
  if (!last_error.empty()) doc["last_error"] = last_error;
  (void)os::WriteFileAtomically(state_path_, doc.dump() + "\n", 0600);
}

bool NodeDaemon::SleepUnlessStopped(std::chrono::milliseconds duration) {
  const auto until = std::chrono::steady_clock::now() + duration;
  while (std::chrono::steady_clock::now() < until) {
    if (stopping_) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return !stopping_;
}

}  // namespace aevatar::nyxid::node
