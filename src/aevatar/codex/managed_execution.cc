// The managed codex_exec execution client: credential-read-only, one exact
// proxy request, every outcome one typed result or error.
#include <algorithm>

#include "aevatar/admission/agent_key_scope.h"
#include "aevatar/admission/route_admission.h"
#include "aevatar/codex/managed_codex.h"
#include "aevatar/codex/managed_routes.h"
#include "base/api_error.h"
#include "base/log.h"

namespace aevatar::orchestrator {
namespace {

// The one log line of a failed managed call: the diagnostic id and the
// typed code (and HTTP status); never ids, keys, prompts or output.
absl::Status Logged(absl::Status status, const std::string& diagnostic_id) {
  base::Log(base::LogLevel::kWarn, "codex_exec.managed_failed", diagnostic_id,
            {{"diagnostic_id", diagnostic_id},
             {"code", base::ApiCode(status)},
             {"http_status", base::HttpStatusFor(status)},
             {"detail", std::string(status.message())}});
  return status;
}

// A NyxID read made with the managed key, as a managed error.
absl::Status InventoryReadError(const absl::Status& read) {
  const std::string code = base::ApiCode(read);
  if (code == "NYXID_CREDENTIAL_REJECTED") {
    return ManagedError(kManagedCredentialUnavailable,
                        "NyxID rejected the stored invocation key; provision it again");
  }
  if (code == "NYXID_ACCESS_DENIED") {
    return ManagedError(kManagedProxyAuthorizationDenied,
                        "NyxID denied the inventory read of the invocation key");
  }
  return ManagedError(kManagedProxyUnavailable, "NyxID's inventory could not be read");
}

}  // namespace

std::chrono::milliseconds ManagedDeadlines::ForRun(int timeout_secs) const {
  const std::chrono::milliseconds extension =
      std::chrono::seconds(std::max(0, timeout_secs - kCodexDefaultTimeoutSecs));
  return std::min(request + extension, client + extension);
}

absl::StatusOr<ManagedCodexResult> ManagedCodex::Execute(
    const std::string& user_id, const CodexExecArgs& args, const std::string& idempotency_key,
    const std::string& diagnostic_id, std::optional<std::chrono::milliseconds> budget,
    const std::vector<std::string>& caller_services) const {
  auto result = ExecuteOnce(user_id, args, idempotency_key, diagnostic_id, budget, caller_services);
  if (config_.on_outcome) {
    config_.on_outcome(result.ok() ? result->status : base::ApiCode(result.status()));
  }
  return result;
}

absl::StatusOr<ManagedCodexResult> ManagedCodex::ExecuteOnce(
    const std::string& user_id, const CodexExecArgs& args, const std::string& idempotency_key,
    const std::string& diagnostic_id, std::optional<std::chrono::milliseconds> budget,
    const std::vector<std::string>& caller_services) const {
  if (args.target != CodexTarget::kManagedSandbox) {
    return Logged(ManagedError(kTargetNotConfigured,
                               "the private_ssh target is not configured on this aevatar host"),
                  diagnostic_id);
  }
  if (absl::Status st = config_.policy.Check(user_id); !st.ok()) return Logged(st, diagnostic_id);
  // Read-only: a missing or unreadable credential is reported, never repaired.
  auto held = vault_->Load(user_id);
  if (!held.ok() || !held->has_value()) {
    return Logged(ManagedError(kManagedCredentialUnavailable,
                               held.ok() ? "no managed invocation credential is provisioned"
                                         : "the managed invocation credential cannot be read"),
                  diagnostic_id);
  }
  const ManagedCredential& credential = **held;
  auto facts = ReadNyxidFacts(*nyxid_, credential.secret);
  if (!facts.ok()) return Logged(InventoryReadError(facts.status()), diagnostic_id);
  if (facts->caller.user_id != user_id) {
    return Logged(ManagedError(kManagedCredentialUnavailable,
                               "the stored invocation key belongs to another NyxID subject"),
                  diagnostic_id);
  }
  // The managed key is restricted to the route it was minted for; the
  // caller's key must name that route too (NyxID never sees the caller's).
  const auto chrono =
      std::find_if(facts->inventory.begin(), facts->inventory.end(),
                   [&](const RouteFacts& route) { return route.id == credential.chrono_route_id; });
  if (absl::Status st =
          CheckAgentKeyAllowsRoute(caller_services, credential.chrono_route_id,
                                   chrono == facts->inventory.end() ? "" : chrono->slug);
      !st.ok()) {
    return Logged(st, diagnostic_id);
  }
  auto routes = SelectManagedRoutes(facts->inventory, user_id, config_.chrono_catalog_id,
                                    config_.llm_catalog_id);
  if (!routes.ok()) return Logged(routes.status(), diagnostic_id);
  if (routes->chrono.id != credential.chrono_route_id) {
    return Logged(ManagedError(kManagedCredentialUnavailable,
                               "the invocation key is restricted to another chrono-sandbox route; "
                               "provision it again"),
                  diagnostic_id);
  }
  http::Headers headers;
  headers.Set("Idempotency-Key", idempotency_key);
  std::chrono::milliseconds timeout = config_.deadlines.ForRun(args.timeout_secs);
  // The caller's budget, when shorter, ends the exchange instead of the chain.
  const bool budget_binds = budget && *budget < timeout;
  if (budget_binds) timeout = std::max(std::chrono::milliseconds(1), *budget);
  const NyxidReply reply =
      nyxid_->Proxy(credential.secret, "POST", routes->chrono.slug, "codex/execute",
                    routes->chrono.id, ManagedCodexRequestBody(args, routes->llm.id).dump(),
                    headers, timeout, kMaxManagedResponseBytes);
  if (budget_binds && reply.status == 0 && reply.transport == absl::StatusCode::kDeadlineExceeded) {
    return Logged(
        ManagedError(kManagedBudgetExhausted, "the caller's remaining budget ended the exchange"),
        diagnostic_id);
  }
  auto result = ClassifyManagedReply(reply);
  if (!result.ok()) return Logged(result.status(), diagnostic_id);
  return result;
}

}  // namespace aevatar::orchestrator
