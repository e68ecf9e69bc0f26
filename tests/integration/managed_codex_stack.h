#ifndef AEVATAR_TESTS_INTEGRATION_MANAGED_CODEX_STACK_H_
#define AEVATAR_TESTS_INTEGRATION_MANAGED_CODEX_STACK_H_

#include <memory>
#include <string>
#include <vector>

#include "aevatar_stack.h"
#include "doubles/responses_double.h"
#include "nlohmann/json.hpp"

namespace aevatar::testing {

struct ManagedCodexOptions {
  std::string backend = "gvisor";  // chrono-sandbox --codex-backend
  std::vector<std::string> aevatar_args;
  std::vector<std::string> chrono_args;
  std::vector<std::string> nyxid_args;
  // users:, orgs: and user_services:; the default gives alice (and bob, who
  // has no chrono-sandbox route) with passwords pw-<name>.
  std::string users_yaml;
  bool llm_route = true;  // seed the chrono-llm-public catalog service
};

// The whole managed codex_exec path, every piece real but the model: the
// responses-double (a TEST DOUBLE of the provider, in this process, with a
// planted provider key and a request record), nyxid with the
// chrono-llm-public catalog pointing at it, chrono-sandbox with the Codex
// runner on `backend`, and aevatar with managed codex_exec for all users.
class ManagedCodexStack {
 public:
  static constexpr char kProviderKey[] = "provider-key-PLANTED-e2e-4c2a91";
  static constexpr char kModel[] = "e2e-double-model";

  explicit ManagedCodexStack(ManagedCodexOptions options = {});

  bool ok() const { return stack_ && stack_->ok(); }
  AevatarStack& stack() { return *stack_; }
  doubles::ResponsesDouble& model() { return *model_; }
  // One JSON object per request the model double received.
  std::vector<nlohmann::json> ModelRecord() const;

  std::string Login(const std::string& username) { return stack_->Login(username); }
  http::ClientResponse EnsureCredential(const std::string& token);
  http::ClientResponse CredentialStatus(const std::string& token);
  // POST /api/tools/codex_exec with `args`.
  http::ClientResponse Exec(const std::string& token, const nlohmann::json& args);
  // The users_yaml a default stack has (it ends in its user_services list,
  // so a test can append routes).
  static std::string DefaultUsers();
  // The managed tool arguments for `prompt`.
  static nlohmann::json ManagedArgs(const std::string& prompt, int timeout_secs = 120);

  // Every file under the stack's directory and the model record, as one
  // string, for secret greps.
  std::string AllStateAndLogs() const;

 private:
  TempDir dir_;
  std::string record_path_;
  std::unique_ptr<doubles::ResponsesDouble> model_;
  std::unique_ptr<AevatarStack> stack_;
};

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_INTEGRATION_MANAGED_CODEX_STACK_H_
