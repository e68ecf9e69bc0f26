#include "chrono/codex/codex_relay.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "base/api_error.h"
#include "base/crypto.h"
#include "http/client.h"
#include "http/problem.h"
#include "nyxid/proxy/upstream_exchange.h"

namespace aevatar::chrono {
namespace {

constexpr char kRelayPath[] = "/v1/responses";
constexpr char kLlmRouteSlug[] = "chrono-llm-public";
constexpr size_t kMaxRelayBodyBytes = 8 << 20;
// The relay serves one run: a few connections at most (Codex retries once).
constexpr int kRelayMaxConnections = 16;
constexpr int kRelayMaxHandlers = 8;

http::Response RelayProblem(const absl::Status& status) {
  return http::ProblemResponse(status, http::NewDiagnosticId());
}

}  // namespace

std::string CodexRelayUpstreamUrl(const CodexRelayTarget& target) {
  std::string base = target.nyxid_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return absl::StrCat(base, "/api/v1/proxy/", kLlmRouteSlug,
                      "/responses?_nyxid_via=", http::PercentEncode(target.user_service_id));
}

http::Response HandleCodexRelayRequest(const CodexRelayTarget& target, http::Request& request) {
  if (request.method != "POST" || request.path != kRelayPath || !request.query.empty()) {
    return RelayProblem(base::ApiError(absl::StatusCode::kNotFound, "NOT_FOUND",
                                       "the relay serves only POST /v1/responses"));
  }
  const std::optional<std::string> presented = http::BearerToken(request);
  if (!presented || target.run_key.empty() ||
      !base::ConstantTimeEquals(*presented, target.run_key)) {
    return RelayProblem(base::ApiError(absl::StatusCode::kUnauthenticated, "RELAY_KEY_INVALID",
                                       "the relay needs this run's key"));
  }
  http::ClientRequest upstream;
  upstream.method = "POST";
  upstream.url = CodexRelayUpstreamUrl(target);
  upstream.timeout = target.timeout;
  upstream.tls = target.nyxid_tls;
  upstream.headers.Set("Authorization", "Bearer " + target.delegation_token);
  for (const char* name : {"Content-Type", "Accept"}) {
    if (auto value = request.headers.Get(name)) upstream.headers.Set(name, *value);
  }
  upstream.body = std::move(request.body);
  // buffer_limit 0: every answer streams, so the first event is not held back.
  auto answer = nyxid::ProxyExchange(std::move(upstream), {.buffer_limit = 0});
  if (!answer.ok()) return RelayProblem(answer.status());
  http::Headers headers;
  if (auto type = answer->headers.Get("Content-Type")) headers.Set("Content-Type", *type);
  answer->headers = std::move(headers);
  return std::move(*answer);
}

absl::StatusOr<std::unique_ptr<CodexRelay>> CodexRelay::Start(os::UniqueFd listen,
                                                              CodexRelayTarget target) {
  http::ServerOptions options;
  options.listen_fd = listen.release();  // Start owns it, whatever happens
  options.io_threads = 1;
  options.max_body_bytes = kMaxRelayBodyBytes;
  options.max_connections = kRelayMaxConnections;
  options.max_concurrent_handlers = kRelayMaxHandlers;
  // A model turn may stream for as long as the run lasts; the exchange's own
  // deadline bounds it.
  auto server = http::Server::Start(options, [target = std::move(target)](http::Request& request) {
    return HandleCodexRelayRequest(target, request);
  });
  if (!server.ok()) return server.status();
  return std::unique_ptr<CodexRelay>(new CodexRelay(std::move(*server)));
}

CodexRelay::~CodexRelay() { Stop(); }

void CodexRelay::Stop() {
  if (server_) server_->Stop(/*grace_secs=*/0);
}

}  // namespace aevatar::chrono
