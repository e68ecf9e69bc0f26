// The adversarial matrix of chrono-sandbox's router (tests/testing/
// route_matrix.h): every route, called on an operation of alice's with each
// credential an attacker might hold, answers what one table says.
//
// chrono-sandbox takes one credential: a NyxID delegation token in
// X-NyxID-Delegation-Token, aud chrono-sandbox, with sandbox:execute; an
// Authorization bearer is only ever forwarded alongside it. So the rows mean:
//   none, forged          no token / an alg-none one: 401;
//   other-user            bob's valid token: alice's operation is 404, and
//                         what bob creates is his own;
//   org-viewer            chrono knows no orgs: whether a viewer may use an
//                         org route is NyxID's decision before minting, so
//                         here it is one more subject (vera), like bob;
//   restricted-key        an Agent Key of alice's as the bearer, without a
//                         delegation token (the key never opens chrono): 401;
//   foreign-delegation    alice's token minted for another audience: 401.
#include "testing/route_matrix.h"

#include <string>

#include "chrono_harness.h"
#include "gtest/gtest.h"
#include "testing/openapi_check.h"
#include "testing/poll.h"

namespace aevatar::chrono {
namespace {

using namespace ::aevatar::testing;  // NOLINT: the matrix vocabulary

const std::string kProgram = R"({"language":"bash","script":"echo hi"})";

std::map<std::string, MatrixRow> Table() {
  // POST with an empty object: a valid caller's request fails validation
  // (400) before anything runs.
  return {
      {"POST /execute", Authenticated(400, 400, 401, 401)},
      {"POST /executions", Authenticated(400, 400, 401, 401)},
      {"GET /executions", Authenticated(200, 200, 401, 401)},
      {"GET /executions/{id}", Authenticated(404, 404, 401, 401)},
      {"GET /executions/{id}/result", Authenticated(404, 404, 401, 401)},
      {"POST /executions/{id}/cancel", Authenticated(404, 404, 401, 401)},
      {"POST /codex/execute", Authenticated(400, 400, 401, 401)},
      // No run of alice's is going (nor anybody's): 404, never 401's leak.
      {"POST /codex/runs/{run_id}/cancel", Authenticated(404, 404, 401, 401)},
      {"GET /healthz", Everyone(200)},
      {"GET /readyz", Everyone(200)},
      // The matrix calls from a non-loopback address and no metrics token is set.
      {"GET /metrics", Everyone(403)},
      {"GET /openapi.json", Everyone(200)},
  };
}

TEST(ChronoRouteMatrix, EveryRouteAnswersEachAttackerAsTheTableSays) {
  ChronoHarness h;
  ASSERT_TRUE(h.Start().ok());
  h.runner().Open();
  http::Response submitted = h.Submit(nlohmann::json::parse(kProgram), "alice-op");
  ASSERT_EQ(submitted.status, 202) << submitted.body;
  const std::string id = BodyOf(submitted).value("operation_id", "");
  ASSERT_FALSE(id.empty());
  ASSERT_TRUE(PollUntil([&] {
    return BodyOf(h.Call("GET", "/executions/" + id)).value("status", "") == "succeeded";
  }));

  const TestIssuer& issuer = h.issuer();
  MatrixSubject subject;
  subject.router = &h.router();
  subject.path_of = [&](std::string path) {
    if (size_t at = path.find("{id}"); at != std::string::npos) path.replace(at, 4, id);
    if (size_t at = path.find("{run_id}"); at != std::string::npos) path.replace(at, 8, "run_1");
    return path;
  };
  subject.present = [&](Attacker attacker, http::Request& request) {
    auto delegation = [&](const std::string& token) {
      request.headers.Set("X-NyxID-Delegation-Token", token);
    };
    nlohmann::json foreign = issuer.DelegationClaims("alice", "proxy:* sandbox:execute");
    foreign["aud"] = "some-other-audience";
    switch (attacker) {
      case kNone:
        break;
      case kForged:
        delegation(RawJws({{"alg", "none"}, {"kid", issuer.kid()}},
                          issuer.DelegationClaims("alice", "proxy:* sandbox:execute"), ""));
        break;
      case kOtherUser:
        delegation(issuer.Delegation("bob"));
        break;
      case kOrgViewer:
        delegation(issuer.Delegation("vera"));
        break;
      case kRestrictedKey:
        request.headers.Set("Authorization", "Bearer nyxid_ag_restricted_to_another_service");
        break;
      case kForeignDelegation:
        delegation(issuer.Sign(foreign));
        break;
    }
  };
  subject.victim_ids = {id};
  RunRouteMatrix(subject, Table());
  // The attackers changed nothing of alice's.
  EXPECT_EQ(BodyOf(h.Call("GET", "/executions/" + id)).value("status", ""), "succeeded");
}

// The router and its OpenAPI document (src/chrono/openapi/) name the same
// operations, both ways, and openapi-spec-validator accepts the document.
TEST(ChronoOpenApi, DocumentCoversEveryRouteAndNothingElse) {
  ChronoHarness h;
  ASSERT_TRUE(h.Start().ok());
  ExpectOpenApiMatchesRouter(h.router(), OpenApiFragments(), "src/chrono/openapi/");
}

TEST(ChronoOpenApi, DocumentPassesOpenApiSpecValidator) {
  ExpectOpenApiSpecValid(OpenApiFragments());
}

}  // namespace
}  // namespace aevatar::chrono
