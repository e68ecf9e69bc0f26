#ifndef AEVATAR_AEVATAR_ROUTES_ROUTE_CONVERGENCE_H_
#define AEVATAR_AEVATAR_ROUTES_ROUTE_CONVERGENCE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "aevatar/routes/route_inventory.h"
#include "nlohmann/json.hpp"

// Bounded, best-effort convergence of the code_execute route contract (spec:
// sandbox-execution.md, the convergence paragraphs). Theory of operation:
//
//   no write authority ──────────────────────────────► kNoWriteAuthority
//   read /keys ── fails ─────────────────────────────► kRepairUnverified
//   resolve ── ready ────────────────────────────────► kNotNeeded (no write)
//           ── not a policy mismatch, or != 1 active ► kNotApplicable
//   the one active candidate is
//     auto_connected ── POST personal alias ── 201 ─► reread, verify ► kAliasCreated
//                                          └─ 409 ─► reread, alias?  ► kAliasRaced
//     caller-writable ── PUT minimal patch ── 2xx ──► reread, verify ► kPatched
//     org route, caller member/viewer ──────────────► kBlockedWriteAuthority
//
// Any write answered with a definitive 4xx (not 408/429) is kRepairRejected;
// status 0, 408, 429, 5xx, or a reread that does not verify is
// kRepairUnverified. NyxID has no compare-and-swap on UserServices, so a
// concurrent scope edit between the read and the PUT can be overwritten; the
// fresh readback only guarantees nothing is admitted on final drift.
namespace aevatar::orchestrator {

// The alias convergence creates beside an auto-connected platform route. The
// slug differs from the platform route's "chrono-sandbox" because NyxID keeps
// (owner, slug) unique and the auto-connected route is the caller's own; the
// proxy path must therefore use the resolved route's slug.
inline constexpr char kAliasSlug[] = "chrono-sandbox-aevatar";
inline constexpr char kAliasLabel[] = "Chrono Sandbox (Aevatar code_execute)";

inline constexpr char kRepairRejectedCode[] = "CODE_EXECUTION_ROUTE_REPAIR_REJECTED";
inline constexpr char kRepairUnverifiedCode[] = "CODE_EXECUTION_ROUTE_REPAIR_UNVERIFIED";
inline constexpr char kWriteAuthorityRequiredCode[] =
    "CODE_EXECUTION_ROUTE_WRITE_AUTHORITY_REQUIRED";

// One NyxID write's answer. http_status 0 = transport failure or timeout.
struct NyxidWriteResult {
  int http_status = 0;
  nlohmann::json body;
};

// What convergence needs from NyxID, with the caller's own credential bound
// in. Implemented over HTTP by the service; by a scripted fake in tests.
// Implementations need not be thread-safe: one convergence uses one writer.
class RouteWriter {
 public:
  virtual ~RouteWriter() = default;
  // A fresh GET /api/v1/keys, parsed. An error means transport failure or 5xx.
  virtual absl::StatusOr<std::vector<RouteFacts>> ReadInventory() = 0;
  // PUT /api/v1/user-services/{id} with a partial body.
  virtual NyxidWriteResult PatchUserService(const std::string& id, const nlohmann::json& patch) = 0;
  // POST /api/v1/user-services.
  virtual NyxidWriteResult CreateUserService(const nlohmann::json& body) = 0;
};

enum class ConvergenceOutcome {
  kNotNeeded,              // already compliant: no write
  kNoWriteAuthority,       // caller lacks write authority: nothing attempted
  kPatched,                // the one candidate was patched and verified
  kAliasCreated,           // a personal alias was created and verified
  kAliasRaced,             // 409 on create, then the reread found a compliant alias
  kBlockedWriteAuthority,  // a mismatching candidate the caller may not write
  kNotApplicable,          // zero or several candidates, or not a policy problem
  kRepairRejected,         // NyxID definitively refused the write
  kRepairUnverified,       // transport, 408/429/5xx, or readback drift
};

struct ConvergenceResult {
  ConvergenceOutcome outcome = ConvergenceOutcome::kNotApplicable;
  // "" or kRepairRejectedCode / kRepairUnverifiedCode / kWriteAuthorityRequiredCode.
  std::string code;
  // REJECTED: request access from the route owner/operator; UNVERIFIED:
  // retry; WRITE_AUTHORITY_REQUIRED: ask an org admin. "" otherwise.
  std::string remediation;
  // The compliant route when one verified (also the untouched route for
  // kNotNeeded).
  std::optional<std::string> route_id;
  int writes = 0;  // PUT/POST calls made
};

// The minimal PUT body for `route`: forward_access_token, inject_delegation_token
// and delegation_token_scope = its unique scopes in first-seen order, then
// proxy:* and sandbox:execute when absent, space-separated.
nlohmann::json MinimalPolicyPatch(const RouteFacts& route);

// The POST body of the caller's personal alias beside auto-connected
// `platform`: kAliasSlug, kAliasLabel, its catalog id, the full contract
// ("proxy:* sandbox:execute" then the platform route's other unique scopes),
// and its node_id when set.
nlohmann::json AliasCreateBody(const RouteFacts& platform);

// Converges the caller's code_execute route contract as the theory block above
// describes. Call it only on fresh interactive/workflow command admission,
// before resolution; readiness queries and execution must never call it (they
// are read-only). `has_write_authority` is request-local evidence that the
// caller presented a verified direct human NyxID access token (never a proxy
// delegation, Agent Key, service account or relay credential); it must never
// be stored in a command, plan, state or read model. The outcome does not
// admit anything by itself: the caller re-resolves afterwards.
ConvergenceResult ConvergeCodeExecutionRoute(RouteWriter& nyxid, const CallerFacts& caller,
                                             bool has_write_authority,
                                             const std::string& chrono_catalog_id);

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_ROUTES_ROUTE_CONVERGENCE_H_
