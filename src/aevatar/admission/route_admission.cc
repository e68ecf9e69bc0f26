#include "aevatar/admission/route_admission.h"

#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "aevatar/clients/nyxid_route_writer.h"
#include "aevatar/routes/route_convergence.h"
#include "base/api_error.h"
#include "base/log.h"

namespace aevatar::orchestrator {
namespace {

constexpr char kRemediationUrl[] = "type.aevatar/remediation";

absl::Status ResolutionError(const RouteResolution& resolution) {
  const std::string code(ResolutionCode(resolution.outcome));
  std::string detail;
  absl::StatusCode status = absl::StatusCode::kFailedPrecondition;
  switch (resolution.outcome) {
    case ResolutionOutcome::kMissing:
      detail = "no catalog-backed chrono-sandbox route is visible to the caller";
      break;
    case ResolutionOutcome::kAccessDenied:
      detail = "a chrono-sandbox route exists but the caller may not use it";
      status = absl::StatusCode::kPermissionDenied;
      break;
    case ResolutionOutcome::kInactive:
      detail = "the caller's chrono-sandbox route is inactive";
      break;
    case ResolutionOutcome::kPolicyMismatch:
      detail = "the chrono-sandbox route does not satisfy the credential contract: " +
               resolution.gaps.Describe();
      break;
    case ResolutionOutcome::kAmbiguous:
      detail = "more than one chrono-sandbox route is eligible; exactly one is required";
      break;
    case ResolutionOutcome::kReady:
      break;
  }
  return WithRemediation(base::ApiError(status, code, detail), resolution.remediation);
}

void LogRejection(const std::string& diagnostic_id, const std::string& category,
                  const CandidateCounts& counts) {
  base::Log(base::LogLevel::kWarn, "code_execute.route_rejected", diagnostic_id,
            {{"diagnostic_id", diagnostic_id},
             {"category", category},
             {"canonical", counts.canonical},
             {"accessible", counts.accessible},
             {"active", counts.active},
             {"eligible", counts.eligible}});
}

absl::Status ConvergenceError(const ConvergenceResult& result) {
  if (result.outcome == ConvergenceOutcome::kRepairUnverified) {
    return WithRemediation(base::ApiError(absl::StatusCode::kUnavailable, result.code,
                                          "the route repair could not be verified", 503),
                           result.remediation);
  }
  return WithRemediation(
      base::ApiError(
          absl::StatusCode::kPermissionDenied, result.code,
          result.outcome == ConvergenceOutcome::kRepairRejected
              ? "NyxID rejected the route repair"
              : "the route misses the credential contract and the caller may not change it"),
      result.remediation);
}

// A resolution and the NyxID facts digest of what it was decided on.
struct Decision {
  RouteResolution resolution;
  std::string facts_digest;
};

Decision ResolveOn(NyxidFacts facts, const std::string& chrono_catalog_id,
                   std::optional<NyxidFacts>* observed) {
  Decision decision{ResolveCodeExecutionRoute(facts.inventory, facts.caller, chrono_catalog_id),
                    facts.facts_digest};
  if (observed != nullptr) *observed = std::move(facts);
  return decision;
}

absl::StatusOr<Decision> Resolve(const NyxidClient& nyxid, const Caller& caller,
                                 const std::string& chrono_catalog_id,
                                 std::optional<NyxidFacts>* observed) {
  auto facts = ReadNyxidFacts(nyxid, caller.credential);
  if (!facts.ok()) return facts.status();
  return ResolveOn(std::move(*facts), chrono_catalog_id, observed);
}

// Keeps the inventory a convergence read last. A convergence that wrote
// nothing read exactly what a resolution would read next, within the same
// request: resolution then decides on those facts instead of asking NyxID
// for the same two documents again (two of a request's exchanges).
class RememberingWriter : public RouteWriter {
 public:
  explicit RememberingWriter(RouteWriter* inner) : inner_(inner) {}
  absl::StatusOr<std::vector<RouteFacts>> ReadInventory() override {
    auto inventory = inner_->ReadInventory();
    last_inventory_.reset();
    if (inventory.ok()) last_inventory_ = *inventory;
    return inventory;
  }
  NyxidWriteResult PatchUserService(const std::string& id, const nlohmann::json& patch) override {
    last_inventory_.reset();
    return inner_->PatchUserService(id, patch);
  }
  NyxidWriteResult CreateUserService(const nlohmann::json& body) override {
    last_inventory_.reset();
    return inner_->CreateUserService(body);
  }
  std::optional<std::vector<RouteFacts>>& last_inventory() { return last_inventory_; }

 private:
  RouteWriter* inner_;
  std::optional<std::vector<RouteFacts>> last_inventory_;
};

// The diagnostic category of a resolution: the spec's lowercase name.
std::string Category(ResolutionOutcome outcome) {
  return absl::AsciiStrToLower(std::string(ResolutionCode(outcome)));
}

}  // namespace

absl::Status WithRemediation(absl::Status status, const std::string& remediation) {
  if (!remediation.empty()) status.SetPayload(kRemediationUrl, absl::Cord(remediation));
  return status;
}

std::string RemediationOf(const absl::Status& status) {
  auto payload = status.GetPayload(kRemediationUrl);
  return payload ? std::string(*payload) : "";
}

absl::StatusOr<AdmittedRoute> AdmitCodeExecutionRoute(
    const NyxidClient& nyxid, const Caller& caller, const std::string& chrono_catalog_id,
    bool fresh_admission, const std::string& diagnostic_id, std::optional<NyxidFacts>* observed,
    std::string* facts_digest) {
  std::optional<NyxidFacts> converged_facts;
  if (fresh_admission && caller.write_authority) {
    std::string me_body;
    auto facts = ReadCallerFacts(nyxid, caller.credential, &me_body);
    if (!facts.ok()) return facts.status();
    NyxidRouteWriter http_writer(&nyxid, caller.credential);
    RememberingWriter writer(&http_writer);
    ConvergenceResult converged =
        ConvergeCodeExecutionRoute(writer, *facts, /*has_write_authority=*/true, chrono_catalog_id);
    if (!converged.code.empty()) {
      base::Log(base::LogLevel::kWarn, "code_execute.route_repair", diagnostic_id,
                {{"diagnostic_id", diagnostic_id},
                 {"category", converged.code},
                 {"writes", converged.writes}});
      return ConvergenceError(converged);
    }
    if (converged.writes == 0 && writer.last_inventory().has_value()) {
      converged_facts = NyxidFacts{std::move(*facts), std::move(*writer.last_inventory()),
                                   ConfirmedFactsDigest(me_body, http_writer.last_evidence())};
    }
  }
  auto decision = converged_facts.has_value()
                      ? absl::StatusOr<Decision>(
                            ResolveOn(std::move(*converged_facts), chrono_catalog_id, observed))
                      : Resolve(nyxid, caller, chrono_catalog_id, observed);
  if (!decision.ok()) return decision.status();
  const RouteResolution& resolution = decision->resolution;
  if (resolution.outcome != ResolutionOutcome::kReady) {
    LogRejection(diagnostic_id, Category(resolution.outcome), resolution.counts);
    return ResolutionError(resolution);
  }
  const RouteFacts& route = *resolution.route;
  if (facts_digest != nullptr) *facts_digest = decision->facts_digest;
  return AdmittedRoute{route.id, route.slug, route.catalog_service_id.value_or("")};
}

absl::StatusOr<NyxidFacts> ReadNyxidFacts(const NyxidClient& nyxid, const std::string& credential) {
  std::string me_body;
  auto caller = ReadCallerFacts(nyxid, credential, &me_body);
  if (!caller.ok()) return caller.status();
  InventoryEvidence evidence;
  auto inventory = ReadInventory(nyxid, credential, &evidence);
  if (!inventory.ok()) return inventory.status();
  return NyxidFacts{std::move(*caller), std::move(*inventory),
                    ConfirmedFactsDigest(me_body, evidence)};
}

absl::StatusOr<nlohmann::json> CodeExecuteReadiness(const NyxidClient& nyxid, const Caller& caller,
                                                    const std::string& chrono_catalog_id,
                                                    const std::string& diagnostic_id,
                                                    std::optional<NyxidFacts>* observed) {
  auto decision = Resolve(nyxid, caller, chrono_catalog_id, observed);
  if (!decision.ok()) return decision.status();
  const RouteResolution& resolution = decision->resolution;
  const CandidateCounts& counts = resolution.counts;
  const bool ready = resolution.outcome == ResolutionOutcome::kReady;
  if (!ready) LogRejection(diagnostic_id, Category(resolution.outcome), counts);
  nlohmann::json out = {
      {"capability", "code_execute"},
      {"capability_class", "PlatformBuiltIn"},
      {"ready", ready},
      {"code", ResolutionCode(resolution.outcome)},
      {"category", ready ? "" : Category(resolution.outcome)},
      {"candidates",
       {{"canonical", counts.canonical},
        {"accessible", counts.accessible},
        {"active", counts.active},
        {"eligible", counts.eligible}}},
      {"diagnostic_id", diagnostic_id},
  };
  if (!ready) out["remediation"] = resolution.remediation;
  if (resolution.outcome == ResolutionOutcome::kPolicyMismatch) {
    out["unsatisfied"] = resolution.gaps.Describe();
  }
  return out;
}

}  // namespace aevatar::orchestrator
