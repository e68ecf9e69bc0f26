#ifndef AEVATAR_CHRONO_CODEX_CODEX_RELAY_H_
#define AEVATAR_CHRONO_CODEX_CODEX_RELAY_H_

#include <chrono>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "http/client.h"
#include "http/message.h"
#include "http/server.h"
#include "os/unique_fd.h"

namespace aevatar::chrono {

// The one network path of a managed Codex run: an HTTP server of
// chrono-sandbox on a listening socket that lives in the run's network
// namespace (os::MakeNetnsListener), so Codex inside reaches it at
// 127.0.0.1:PORT while no process of ours runs in the sandbox.
//
// It accepts only POST /v1/responses (body <= 8 MiB; anything else 404)
// carrying "Authorization: Bearer <run_key>" (401 otherwise) and forwards it
// to
//   {nyxid_url}/api/v1/proxy/chrono-llm-public/responses?_nyxid_via={route}
// with only Authorization (Bearer <the caller's delegation token>),
// Content-Type and Accept, streaming the status, Content-Type and body back
// as they arrive. An unreachable or slow upstream gives 502/504 problems.
// Logs nothing of the exchange.
//
// Why a run key: Codex must hold its credential in its environment
// (NYXID_LLM_TOKEN), and every command Codex runs shares its uid, so it can
// read Codex's /proc/PID/environ. Codex therefore holds only a random key
// good for this relay during this run; the delegation token stays in this
// process and is put on the request as it leaves. NyxID sees exactly what
// it would if Codex had held the token.
struct CodexRelayTarget {
  std::string nyxid_url;         // e.g. http://127.0.0.1:8080 (no trailing path)
  http::ClientTls nyxid_tls;     // an https nyxid_url: its CA, chrono's client certificate
  std::string user_service_id;   // the caller's chrono-llm-public route id
  std::string run_key;           // what Codex presents (its NYXID_LLM_TOKEN)
  std::string delegation_token;  // what NyxID gets instead
  // Each forwarded exchange must finish within this (the run's own deadline).
  std::chrono::milliseconds timeout{180'000};
};

// Returns the URL the relay forwards to for `target`.
std::string CodexRelayUpstreamUrl(const CodexRelayTarget& target);

// Answers one relay request (exposed for tests; the server calls it).
http::Response HandleCodexRelayRequest(const CodexRelayTarget& target, http::Request& request);

class CodexRelay {
 public:
  // Serves `listen` (a listening socket; ownership passes to the relay).
  static absl::StatusOr<std::unique_ptr<CodexRelay>> Start(os::UniqueFd listen,
                                                           CodexRelayTarget target);
  ~CodexRelay();
  CodexRelay(const CodexRelay&) = delete;
  CodexRelay& operator=(const CodexRelay&) = delete;

  // Stops serving and closes the listener and every connection (in-flight
  // exchanges are cut); idempotent.
  void Stop();

 private:
  explicit CodexRelay(std::unique_ptr<http::Server> server) : server_(std::move(server)) {}
  std::unique_ptr<http::Server> server_;
};

}  // namespace aevatar::chrono

#endif  // AEVATAR_CHRONO_CODEX_CODEX_RELAY_H_
