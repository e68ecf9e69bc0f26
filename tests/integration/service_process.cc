#include "service_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <thread>

#include "http/client.h"
#include "nlohmann/json.hpp"
#include "testing/proc_file.h"

namespace aevatar::testing {

std::string TestPki(const std::string& name) {
  return std::string(AEVATAR_SOURCE_DIR) + "/tests/http/testdata/" + name;
}

std::string BinaryPath(const std::string& name) {
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return name;
  return (std::filesystem::path(std::string(self, n)).parent_path() / name).string();
}

std::vector<pid_t> ProcessesMatching(const std::string& needle) {
  std::vector<pid_t> pids;
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc", ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string cmdline = ReadProcFile(it->path() / "cmdline");
    if (cmdline.find(needle) != std::string::npos) pids.push_back(std::stoi(name));
  }
  return pids;
}

ServiceProcess::ServiceProcess(std::vector<std::string> argv, std::string log_path)
    : log_path_(std::move(log_path)) {
  tls_ = std::find(argv.begin(), argv.end(), "--tls-cert") != argv.end();
  // A service trusts only what its own flags say: the test process's
  // SSL_CERT_FILE/SSL_CERT_DIR (OpenSSL reads them) stay with the test.
  std::vector<char*> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    if (!text.starts_with("SSL_CERT_FILE=") && !text.starts_with("SSL_CERT_DIR=")) {
      env.push_back(*entry);
    }
  }
  env.push_back(nullptr);
  std::vector<char*> args;
  for (auto& arg : argv) args.push_back(arg.data());
  args.push_back(nullptr);
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return;
  int log_fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(out[1], 1);
    ::dup2(log_fd, 2);
    ::execve(args[0], args.data(), env.data());
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(log_fd);
  // Read the first stdout line (with a deadline) to learn the port.
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (line.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    struct pollfd pfd = {out[0], POLLIN, 0};
    if (::poll(&pfd, 1, 200) <= 0) continue;
    char buf[256];
    ssize_t n = ::read(out[0], buf, sizeof(buf));
    if (n <= 0) break;
    line.append(buf, n);
  }
  ::close(out[0]);
  std::smatch match;
  if (std::regex_search(line, match, std::regex(R"(port (\d+))"))) {
    port_ = static_cast<uint16_t>(std::stoi(match[1]));
  }
}

ServiceProcess::~ServiceProcess() {
  if (pid_ > 0) Terminate();
}

std::string ServiceProcess::ReadLog() const {
  std::ifstream in(log_path_);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool ServiceProcess::WaitForLog(const std::string& needle,
                                std::chrono::milliseconds timeout) const {
  return PollUntil([&] { return ReadLog().find(needle) != std::string::npos; }, timeout);
}

bool ServiceProcess::WaitForSentinel(const std::string& path) const {
  http::ClientRequest request;
  request.url = base_url() + path;
  request.tls.ca_file = TestPki("ca.pem");  // an https service only
  auto response = http::Fetch(request);
  if (!response.ok()) return false;
  const nlohmann::json body = nlohmann::json::parse(response->body, nullptr, false);
  if (!body.is_object() || !body.contains("diagnostic_id")) return false;
  const nlohmann::json& id = body["diagnostic_id"];
  return id.is_string() && !id.get<std::string>().empty() && WaitForLog(id.get<std::string>());
}

void ServiceProcess::KillHard() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

int ServiceProcess::Terminate() {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGTERM);
  int status = 0;
  // Only a hang outlasts the guard: a sanitized stack on a loaded machine
  // can take seconds to drain and close its stores.
  if (PollUntil([&] { return ::waitpid(pid_, &status, WNOHANG) == pid_; })) {
    pid_ = -1;
    return status;
  }
  KillHard();
  return -1;
}

}  // namespace aevatar::testing
