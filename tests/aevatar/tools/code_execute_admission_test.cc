// code_execute's admission through aevatar's real router in front of the
// NyxID stand-in: how many NyxID reads a call costs, and that nothing of an
// earlier call lets a revoked route through.
#include <string>

#include "api_fixture.h"
#include "nlohmann/json.hpp"

namespace aevatar::orchestrator {
namespace {

constexpr char kBashTrue[] = R"({"language":"bash","source":"true"})";

std::string CodeOf(const http::Response& response) {
  auto body = nlohmann::json::parse(response.body, nullptr, false);
  return body.is_object() ? body.value("code", "") : "";
}

TEST_F(AevatarApiTest, ACompliantRouteIsAdmittedOnOneReadOfTheCallerAndTheInventory) {
  Call("POST", "/api/tools/code_execute", kBashTrue);
  // Convergence read both and wrote nothing; resolution decided on the same
  // facts instead of reading them again.
  EXPECT_EQ(nyxid_.Count("/api/v1/me"), 1);
  EXPECT_EQ(nyxid_.Count("/api/v1/keys"), 1);
  // Admitted: the call went on to the proxy (the stand-in plays only codex
  // behind it, so its answer is a 404 that comes back typed).
  EXPECT_EQ(nyxid_.Count("/api/v1/proxy/"), 1);
}

TEST_F(AevatarApiTest, ARouteRevokedBetweenTwoCallsIsRefusedOnTheSecond) {
  Call("POST", "/api/tools/code_execute", kBashTrue);
  ASSERT_EQ(nyxid_.Count("/api/v1/proxy/"), 1);
  nyxid_.SetRoutes({});  // the route is gone from the caller's inventory
  http::Response refused = Call("POST", "/api/tools/code_execute", kBashTrue);
  EXPECT_EQ(CodeOf(refused), "CODE_EXECUTION_ROUTE_MISSING") << refused.body;
  EXPECT_EQ(nyxid_.Count("/api/v1/proxy/"), 1);  // never proxied
}

TEST_F(AevatarApiTest, ARouteMadeInactiveBetweenTwoCallsIsRefusedOnTheSecond) {
  Call("POST", "/api/tools/code_execute", kBashTrue);
  nlohmann::json inactive = testing::FakeNyxid::ChronoRoute();
  inactive["active"] = false;
  nyxid_.SetRoutes({inactive});
  http::Response refused = Call("POST", "/api/tools/code_execute", kBashTrue);
  EXPECT_NE(refused.status, 200);
  EXPECT_EQ(nyxid_.Count("/api/v1/proxy/"), 1) << refused.body;
}

}  // namespace
}  // namespace aevatar::orchestrator
