#ifndef AEVATAR_TESTS_AEVATAR_CODEX_FAKE_NYXID_H_
#define AEVATAR_TESTS_AEVATAR_CODEX_FAKE_NYXID_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "http/server.h"
#include "nlohmann/json.hpp"

// A NyxID stand-in on loopback for managed codex_exec tests: it counts and
// records every request, answers /me, /keys and the Agent Key lifecycle like
// NyxID (keys minted here, hashed nowhere, revocable), and hands the proxied
// POST .../codex/execute to a scripted handler that plays chrono-sandbox, and
// the SSH route to one that plays a node.
namespace aevatar::orchestrator::testing {

inline constexpr char kUser[] = "user-1";
inline constexpr char kHumanToken[] = "human-token-user-1";
inline constexpr char kChronoRouteId[] = "us_chrono_1";
inline constexpr char kLlmRouteId[] = "us_llm_1";

struct RecordedRequest {
  std::string method, path, query, authorization, idempotency_key, body;
};

class FakeNyxid {
 public:
  using CodexHandler = std::function<http::Response(const http::Request&)>;

  FakeNyxid();
  ~FakeNyxid();
  bool ok() const { return server_ != nullptr; }
  std::string url() const;

  // The inventory GET /api/v1/keys returns (a list of route objects).
  // A vector, not a json: with one element, `{route}` as a json is the route
  // itself under clang and an array under GCC.
  void SetRoutes(std::vector<nlohmann::json> routes);
  // A chrono-sandbox route of kUser meeting the managed contract, and a
  // chrono-llm-public route; tests edit the fields they break.
  static nlohmann::json ChronoRoute();
  static nlohmann::json LlmRoute();
  // Plays chrono-sandbox behind the proxy, for every path under
  // /api/v1/proxy/chrono-sandbox/codex/ (default: a succeeded CODEX_EXEC_READY).
  void OnCodexExecute(CodexHandler handler);
  // Plays a node behind POST /api/v1/ssh/{service}/exec (default: exit code
  // 0, stdout CODEX_EXEC_READY).
  void OnSshExec(CodexHandler handler);
  static http::Response Reply(int status, const nlohmann::json& body);

  // Every request so far (introspection aside); the number whose path
  // starts with `prefix`.
  std::vector<RecordedRequest> Requests() const;
  int Count(const std::string& prefix = "/") const;
  // The secrets of the Agent Keys minted so far, and revocation.
  std::vector<std::string> MintedKeys() const;
  void RevokeAllKeys();
  // Introspection reports the tokens of `subject` revoked (a logout).
  void RevokeTokensOf(const std::string& subject);

 private:
  struct State;
  http::Response Handle(const http::Request& request);
  http::Response Introspect(const http::Request& request);
  std::shared_ptr<State> state_;
  std::unique_ptr<http::Server> server_;
};

}  // namespace aevatar::orchestrator::testing

#endif  // AEVATAR_TESTS_AEVATAR_CODEX_FAKE_NYXID_H_
