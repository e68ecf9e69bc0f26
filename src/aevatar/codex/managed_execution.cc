// The managed codex_exec execution client: credential-read-only, one exact
// proxy request, every outcome one typed result or error.
#include <algorithm>

#include "aevatar/admission/agent_key_scope.h"
#include "aevatar/admission/route_admission.h"
#include "aevatar/codex/managed_cancel.h"
#include "aevatar/codex/managed_codex.h"
#include "aevatar/codex/managed_routes.h"
#include "base/api_error.h"
#include "base/log.h"

namespace aevatar::orchestrator {
namespace {

// One cancel request's bound (the cancel is small; it is retried anyway).
constexpr std::chrono::seconds kManagedCancelTimeout{10};
// How long CancelRun sends the cancel again while chrono-sandbox answers 404
// (the run not registered yet) or 5xx: a stop turn holds the run meanwhile.
constexpr std::chrono::seconds kStopCancelRetry{5};

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
    const std::vector<std::string>& caller_services, const absl::Notification* cancel) const {
  auto result =
      ExecuteOnce(user_id, args, idempotency_key, diagnostic_id, budget, caller_services, cancel);
  if (config_.on_outcome) {
    config_.on_outcome(result.ok() ? result->status : base::ApiCode(result.status()));
  }
  return result;
}

absl::StatusOr<ManagedCodex::Target> ManagedCodex::Resolve(
    const std::string& user_id, const std::string& diagnostic_id,
    const std::vector<std::string>& caller_services) const {
  if (absl::Status st = config_.policy.Check(user_id); !st.ok()) return Logged(st, diagnostic_id);
  // Read-only: a missing or unreadable credential is reported, never repaired.
  auto held = vault_->Load(user_id);
  if (!held.ok() || !held->has_value()) {
    return Logged(ManagedError(kManagedCredentialUnavailable,
                               held.ok() ? "no managed invocation credential is provisioned"
                                         : "the managed invocation credential cannot be read"),
                  diagnostic_id);
  }
  ManagedCredential& credential = **held;
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
  return Target{std::move(credential.secret), routes->chrono.slug, routes->chrono.id,
                routes->llm.id};
}

absl::StatusOr<ManagedCodexResult> ManagedCodex::ExecuteOnce(
    const std::string& user_id, const CodexExecArgs& args, const std::string& idempotency_key,
    const std::string& diagnostic_id, std::optional<std::chrono::milliseconds> budget,
    const std::vector<std::string>& caller_services, const absl::Notification* cancel) const {
  if (args.target != CodexTarget::kManagedSandbox) {
    return Logged(ManagedError(kTargetNotConfigured,
                               "the private_ssh target is not configured on this aevatar host"),
                  diagnostic_id);
  }
  auto target = Resolve(user_id, diagnostic_id, caller_services);
  if (!target.ok()) return target.status();
  http::Headers headers;
  headers.Set("Idempotency-Key", idempotency_key);
  std::chrono::milliseconds timeout = config_.deadlines.ForRun(args.timeout_secs);
  // The caller's budget, when shorter, ends the exchange instead of the chain.
  const bool budget_binds = budget && *budget < timeout;
  if (budget_binds) timeout = std::max(std::chrono::milliseconds(1), *budget);
  if (cancel != nullptr && cancel->HasBeenNotified()) {
    return Logged(ManagedError(kManagedExecutionCancelled, "cancelled before the run was sent"),
                  diagnostic_id);
  }
  nlohmann::json body = ManagedCodexRequestBody(args, target->llm_id);
  const std::string run_id = ManagedRunId(idempotency_key);
  body["run_id"] = run_id;
  const CancellableReply exchanged = RunCancellable(
      [&] {
        return nyxid_->Proxy(target->secret, "POST", target->chrono_slug, "codex/execute",
                             target->chrono_id, body.dump(), headers, timeout,
                             kMaxManagedResponseBytes);
      },
      [&] { return SendCancel(*target, run_id); }, cancel);
  const NyxidReply& reply = exchanged.reply;
  if (exchanged.cancel_asked) {
    base::Log(base::LogLevel::kInfo, "codex_exec.managed_cancel", diagnostic_id,
              {{"diagnostic_id", diagnostic_id}, {"cancel_http_status", exchanged.cancel_status}});
  }
  if (budget_binds && reply.status == 0 && reply.transport == absl::StatusCode::kDeadlineExceeded) {
    return Logged(
        ManagedError(kManagedBudgetExhausted, "the caller's remaining budget ended the exchange"),
        diagnostic_id);
  }
  auto result = ClassifyManagedReply(reply);
  if (!result.ok()) return Logged(result.status(), diagnostic_id);
  return result;
}

NyxidReply ManagedCodex::SendCancel(const Target& target, const std::string& run_id) const {
  return nyxid_->Proxy(target.secret, "POST", target.chrono_slug,
                       "codex/runs/" + run_id + "/cancel", target.chrono_id, "{}", {},
                       kManagedCancelTimeout);
}

absl::Status ManagedCodex::CancelRun(const std::string& user_id, const std::string& idempotency_key,
                                     const std::string& diagnostic_id,
                                     const std::vector<std::string>& caller_services) const {
  auto target = Resolve(user_id, diagnostic_id, caller_services);
  if (!target.ok()) return target.status();
  const std::string run_id = ManagedRunId(idempotency_key);
  const NyxidReply reply = SendCancelUntilSettled([&] { return SendCancel(*target, run_id); },
                                                  kStopCancelRetry, nullptr);
  base::Log(base::LogLevel::kInfo, "codex_exec.managed_cancel", diagnostic_id,
            {{"diagnostic_id", diagnostic_id}, {"cancel_http_status", reply.status}});
  if (reply.status == 202) return absl::OkStatus();
  return ManagedError(
      reply.status == 404 ? kManagedProxyTargetUnavailable : kManagedProxyUnavailable,
      "the run's cancel was not accepted (HTTP " + std::to_string(reply.status) + ")");
}

}  // namespace aevatar::orchestrator
