// The managed credential lifecycle: POST (provision / reconcile) and GET
// (read-only status and execution readiness) of /api/managed-codex/credential.
#include "absl/strings/str_cat.h"
#include "aevatar/admission/route_admission.h"
#include "aevatar/codex/managed_codex.h"
#include "aevatar/codex/managed_routes.h"
#include "base/api_error.h"
#include "base/json_read.h"
#include "base/log.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

constexpr char kKeyLabel[] = "aevatar managed codex_exec";

const char* RemediationFor(std::string_view reason) {
  if (reason == kManagedTargetDisabled) {
    return "the operator enables managed Codex: aevatar serve --managed-codex allowlist|all";
  }
  if (reason == kManagedFeatureNotEnabled) {
    return "the operator adds this NyxID user to --managed-codex-allowlist";
  }
  if (reason == std::string_view("managed_credential_missing") ||
      reason == kManagedCredentialUnavailable) {
    return "run `aevatar codex credential ensure` (POST /api/managed-codex/credential) with a "
           "human NyxID login, then read the status again";
  }
  if (reason == kManagedUserServicesUnavailable) {
    return "the user needs exactly one directly owned, active chrono-sandbox UserService with "
           "forward_access_token=true and proxy:* in its delegation scope";
  }
  if (reason == std::string_view("managed_llm_route_unavailable")) {
    return "the operator configures the chrono-llm-public model route (aevatar up "
           "--llm-upstream URL --llm-api-key-file F --llm-model NAME) so the user has exactly one "
           "usable chrono-llm-public UserService";
  }
  return "NyxID could not be read; retry the status read";
}

json StatusDocument(const ManagedCodexConfig& config, const std::string& status,
                    const std::string& reason) {
  json out = {{"status", status},
              {"execution_ready", reason == "ready"},
              {"execution_readiness_reason", reason},
              {"capability", "codex_exec"},
              {"target", "managed_sandbox"},
              {"capability_class", kCodexCapabilityClass},
              {"rollout_boundary", kCodexRolloutBoundary},
              {"eligibility_mode", std::string(config.policy.ModeName())}};
  if (reason != "ready") out["remediation"] = RemediationFor(reason);
  return out;
}

// The NyxID Agent Key `key_id` is listed for the caller, not revoked, and
// restricted to exactly `route_id`.
bool KeyStillValid(const NyxidReply& reply, const std::string& key_id,
                   const std::string& route_id) {
  if (reply.status != 200) return false;
  for (const json& key : base::ArrayOrEmpty(reply.body, "agent_keys")) {
    if (base::StringOr(key, "id", "") != key_id) continue;
    if (base::BoolOr(key, "revoked", true)) return false;
    const json& allowed = base::ArrayOrEmpty(key, "allowed_services");
    return allowed.size() == 1 && allowed[0].is_string() && allowed[0] == route_id;
  }
  return false;
}

}  // namespace

ManagedCodex::ManagedCodex(const NyxidClient* nyxid, ManagedCredentialVault* vault,
                           ManagedCodexConfig config, std::function<int64_t()> clock)
    : nyxid_(nyxid), vault_(vault), config_(std::move(config)), clock_(std::move(clock)) {}

absl::StatusOr<std::string> EnsureVaultAgentKey(const NyxidClient& nyxid,
                                                ManagedCredentialVault& vault, const Caller& caller,
                                                const std::string& chrono_catalog_id,
                                                int64_t now_ms, const std::string& diagnostic_id) {
  if (caller.kind != CredentialKind::kHumanBearer) {
    return base::ApiError(absl::StatusCode::kPermissionDenied,
                          "MANAGED_CREDENTIAL_HUMAN_TOKEN_REQUIRED",
                          "provisioning the managed credential needs a human NyxID login", 403);
  }
  auto facts = ReadNyxidFacts(nyxid, caller.credential);
  if (!facts.ok()) return facts.status();
  auto chrono =
      SelectManagedChronoRoute(facts->inventory, facts->caller.user_id, chrono_catalog_id);
  if (!chrono.ok()) return chrono.status();

  // Serializes provisioning, so two POSTs for one user mint one key.
  static absl::Mutex ensure_mu(absl::kConstInit);
  absl::MutexLock lock(&ensure_mu);
  auto existing = vault.Load(caller.user_id);
  if (!existing.ok() && !absl::IsDataLoss(existing.status())) return existing.status();
  std::string action = "created";
  if (existing.ok() && existing->has_value()) {
    const ManagedCredential& held = **existing;
    if (held.chrono_route_id == chrono->id &&
        KeyStillValid(nyxid.ListAgentKeys(caller.credential), held.key_id, chrono->id)) {
      return std::string("unchanged");
    }
    action = "replaced";
  } else if (!existing.ok()) {
    action = "replaced";  // a sealed row that no longer opens
  }

  NyxidReply created = nyxid.CreateAgentKey(caller.credential, kKeyLabel, {chrono->id});
  if (created.status != 201 && created.status != 200) {
    base::Log(base::LogLevel::kWarn, "managed_codex.credential_mint_failed", diagnostic_id,
              {{"diagnostic_id", diagnostic_id}, {"http_status", created.status}});
    return ManagedError(
        kManagedCredentialUnavailable,
        absl::StrCat("NyxID did not mint the invocation key (HTTP ", created.status, ")"));
  }
  auto key = base::RequiredString(created.body, "key");
  auto key_id = base::RequiredString(created.body, "id");
  if (!key.ok() || !key_id.ok() || key->empty() || key_id->empty()) {
    return NyxidResponseInvalid("agent key", key.ok() ? key_id.status() : key.status());
  }
  ManagedCredential credential;
  credential.key_id = *key_id;
  credential.chrono_route_id = chrono->id;
  credential.secret = *std::move(key);
  credential.created_at_ms = now_ms;
  credential.updated_at_ms = credential.created_at_ms;
  if (absl::Status st = vault.Store(caller.user_id, credential); !st.ok()) {
    // The new key is useless unstored: revoke it rather than leave it live.
    nyxid.RevokeAgentKey(caller.credential, credential.key_id);
    return st;
  }
  if (existing.ok() && existing->has_value() && (*existing)->key_id != credential.key_id) {
    // Best effort: the replaced key is no longer aevatar's.
    nyxid.RevokeAgentKey(caller.credential, (*existing)->key_id);
  }
  base::Log(base::LogLevel::kInfo, "managed_codex.credential_provisioned", diagnostic_id,
            {{"diagnostic_id", diagnostic_id}, {"action", action}});
  return action;
}

absl::StatusOr<json> ManagedCodex::EnsureCredential(const Caller& caller,
                                                    const std::string& diagnostic_id) {
  if (absl::Status st = config_.policy.Check(caller.user_id); !st.ok()) return st;
  auto action = EnsureVaultAgentKey(*nyxid_, *vault_, caller, config_.chrono_catalog_id, clock_(),
                                    diagnostic_id);
  if (!action.ok()) return action.status();
  json out = CredentialStatus(caller.user_id);
  out["action"] = *action;
  return out;
}

json ManagedCodex::CredentialStatus(const std::string& user_id) const {
  if (config_.policy.mode == EligibilityMode::kOff) {
    return StatusDocument(config_, "disabled", kManagedTargetDisabled);
  }
  if (!config_.policy.Check(user_id).ok()) {
    return StatusDocument(config_, "not_eligible", kManagedFeatureNotEnabled);
  }
  auto held = vault_->Load(user_id);
  if (!held.ok()) return StatusDocument(config_, "unavailable", kManagedCredentialUnavailable);
  if (!held->has_value()) return StatusDocument(config_, "missing", "managed_credential_missing");
  // Read-only readiness: the key itself reads the user's inventory.
  auto facts = ReadNyxidFacts(*nyxid_, (*held)->secret);
  if (!facts.ok()) {
    const std::string code = base::ApiCode(facts.status());
    const bool rejected = absl::IsUnauthenticated(facts.status()) ||
                          code == "NYXID_CREDENTIAL_REJECTED" || code == "NYXID_ACCESS_DENIED";
    return StatusDocument(config_, "active",
                          rejected ? kManagedCredentialUnavailable : kManagedProxyUnavailable);
  }
  if (facts->caller.user_id != user_id) {
    return StatusDocument(config_, "active", kManagedCredentialUnavailable);
  }
  auto chrono = SelectManagedChronoRoute(facts->inventory, user_id, config_.chrono_catalog_id);
  if (!chrono.ok()) return StatusDocument(config_, "active", kManagedUserServicesUnavailable);
  if (chrono->id != (*held)->chrono_route_id) {
    return StatusDocument(config_, "active", kManagedCredentialUnavailable);
  }
  auto routes = SelectManagedRoutes(facts->inventory, user_id, config_.chrono_catalog_id,
                                    config_.llm_catalog_id);
  if (!routes.ok()) return StatusDocument(config_, "active", "managed_llm_route_unavailable");
  return StatusDocument(config_, "active", "ready");
}

}  // namespace aevatar::orchestrator
