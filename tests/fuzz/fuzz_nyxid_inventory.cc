// NyxID's answers that aevatar acts on: the caller-visible inventory
// (GET /api/v1/keys), the caller's identity (GET /api/v1/me) and token
// introspection. Properties: no crash or exception; a parsed inventory has
// non-empty ids and owners of a known type; route resolution over whatever
// parsed picks only a route of that inventory.
#include "aevatar/clients/nyxid_client.h"
#include "aevatar/routes/route_inventory.h"
#include "aevatar/routes/route_resolution.h"
#include "base/json_read.h"
#include "fuzz_check.h"

using namespace aevatar;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto document = base::ParseJson(fuzz::AsText(data, size));
  if (!document.ok()) return 0;

  auto inventory = orchestrator::ParseKeysInventory(*document);
  if (inventory.ok()) {
    for (const orchestrator::RouteFacts& route : *inventory) {
      FUZZ_CHECK(!route.id.empty());
      FUZZ_CHECK(route.owner_type == "user" || route.owner_type == "org");
      FUZZ_CHECK(!route.owner_id.empty());
    }
  }
  auto caller = orchestrator::ParseCallerFacts(*document);
  if (caller.ok()) {
    FUZZ_CHECK(!caller->user_id.empty());
    for (const auto& [org, role] : caller->org_roles) {
      FUZZ_CHECK(role == "admin" || role == "member" || role == "viewer");
    }
  }
  if (inventory.ok()) {
    // The same document as both answers: resolution must stay inside it.
    orchestrator::CallerFacts facts =
        caller.ok() ? *caller : orchestrator::CallerFacts{"u_fuzz", {}};
    const orchestrator::RouteResolution resolved =
        orchestrator::ResolveCodeExecutionRoute(*inventory, facts, "chrono-sandbox");
    if (resolved.route) {
      bool found = false;
      for (const orchestrator::RouteFacts& route : *inventory)
        found = found || route.id == resolved.route->id;
      FUZZ_CHECK(found);
    }
  }
  if (auto introspection = orchestrator::ParseIntrospection(*document); introspection.ok()) {
    (void)introspection->active;
  }
  return 0;
}
