#include "cli/chrono_run_remote.h"

#include <cstdlib>
#include <iostream>

#include "base/json_read.h"
#include "base/utf8.h"
#include "chrono/caller_auth.h"
#include "cli/server_replies.h"
#include "http/client.h"
#include "http/service_tls.h"
#include "http/url.h"
#include "os/unique_fd.h"

namespace aevatar::cli {
namespace {

int Refuse(const std::string& message, int exit_code) {
  std::cerr << "chrono-sandbox run: " << message << "\n";
  return exit_code;
}

}  // namespace

int RunOnServer(const RunCommandOptions& options, const sandbox::RunSpec& spec) {
  const char* token = std::getenv(kServerTokenVariable);
  if (token == nullptr || *token == '\0') {
    return Refuse(std::string("--server needs a delegation token in ") + kServerTokenVariable,
                  kRunBadArguments);
  }
  auto url = http::ParseHttpUrl(options.server);
  if (!url.ok() || url->target != "/") {
    return Refuse("--server wants http(s)://HOST:PORT", kRunBadArguments);
  }
  // The token is a bearer credential: it crosses the network only inside TLS.
  if (!url->tls && !http::IsLoopbackHost(url->host)) {
    return Refuse("--server sends a token: use https:// for a host other than loopback",
                  kRunBadArguments);
  }
  if (options.timeout_secs < 1 || options.timeout_secs > 600) {
    return Refuse("--timeout-secs must be 1..600", kRunBadArguments);
  }
  // The request is JSON text: bytes that are not UTF-8 cannot travel in it
  // unchanged, and a run must get exactly what it was given.
  if (!base::IsValidUtf8(spec.source) || !base::IsValidUtf8(spec.stdin_data)) {
    return Refuse("--server sends the program as JSON: its source and stdin must be UTF-8",
                  kRunBadArguments);
  }
  nlohmann::json body = {{"language", options.language},
                         {"script", spec.source},
                         {"timeout_secs", options.timeout_secs}};
  if (!spec.stdin_data.empty()) body["stdin"] = spec.stdin_data;
  if (!spec.env.empty()) {
    nlohmann::json env = nlohmann::json::object();
    for (const sandbox::EnvVar& var : spec.env) {
      if (!base::IsValidUtf8(var.name) || !base::IsValidUtf8(var.value)) {
        return Refuse("--server sends --env as JSON: it must be UTF-8", kRunBadArguments);
      }
      env[var.name] = var.value;
    }
    body["env"] = env;
  }
  if (!options.runtime.empty()) body["runtime"] = options.runtime;

  http::ClientRequest request;
  request.method = "POST";
  request.url = url->tls ? "https://" : "http://";
  request.url += url->HostHeader() + "/execute";
  request.tls.ca_file = options.ca_file;
  request.headers.Set("Content-Type", "application/json");
  request.headers.Set(chrono::kDelegationTokenHeader, token);
  request.body = body.dump();
  // The run's own deadline, and time to queue for a worker and reply.
  request.timeout = std::chrono::seconds(options.timeout_secs + 60);
  auto response = http::Fetch(request);
  if (!response.ok()) {
    return Refuse(
        "cannot reach " + options.server + ": " + std::string(response.status().message()),
        kRunSandboxFailure);
  }
  if (response->status != 200) {
    std::cerr << "chrono-sandbox run: " << DescribeProblem(response->status, response->body);
    // A request the server refused as it stands; a timeout or a full queue
    // (408, 429) may pass later, like a server error.
    const int status = response->status;
    const bool refused = status >= 400 && status < 500 && status != 408 && status != 429;
    return refused ? kRunBadArguments : kRunSandboxFailure;
  }
  const nlohmann::json result = ParsedOrNull(response->body);
  if (!result.is_object()) return Refuse("the server's reply is not a result", kRunSandboxFailure);
  if (options.json) {
    std::cout << result.dump() << std::endl;
    return 0;
  }
  // A closed terminal is the reader's choice; the exit code still reports the run.
  (void)os::WriteAll(1, base::StringOr(result, "stdout", ""), "stdout");
  (void)os::WriteAll(2, base::StringOr(result, "stderr", ""), "stderr");
  return ExecExitCode(result);
}

}  // namespace aevatar::cli
