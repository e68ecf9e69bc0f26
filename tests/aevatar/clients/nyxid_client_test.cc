#include "aevatar/clients/nyxid_client.h"

#include <string>

#include "aevatar/clients/nyxid_route_writer.h"
#include "base/api_error.h"
#include "clients/canned_server.h"
#include "gtest/gtest.h"

// NyxidClient and the typed reads built on it, against a canned NyxID on
// loopback that sends malformed answers on purpose.
namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

class NyxidClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(nyxid_.ok());
    client_ = std::make_unique<NyxidClient>(nyxid_.url(), "introspection-secret");
  }

  testing::CannedServer nyxid_;
  std::unique_ptr<NyxidClient> client_;
};

void ExpectResponseInvalid(const absl::Status& status) {
  EXPECT_EQ(base::ApiCode(status), kNyxidResponseInvalidCode) << status;
  EXPECT_EQ(base::HttpStatusFor(status), 502) << status;
}

TEST_F(NyxidClientTest, AnInventoryOfTheWrongShapeIsResponseInvalidNotACallerError) {
  // Before, these surfaced as 400 INVALID_ARGUMENT: as if the caller had
  // sent something wrong, when NyxID broke its contract.
  for (const char* body : {R"({"keys": [{"id": 5}]})", R"({"keys": "none"})", R"([])", "<html>"}) {
    nyxid_.Answer("/api/v1/keys", 200, body);
    auto inventory = ReadInventory(*client_, "bearer");
    ASSERT_FALSE(inventory.ok()) << body;
    ExpectResponseInvalid(inventory.status());
  }
  nyxid_.Answer("/api/v1/me", 200, R"({"id": ["u_1"]})");
  ExpectResponseInvalid(ReadCallerFacts(*client_, "bearer").status());
}

TEST_F(NyxidClientTest, ErrorStatusesKeepTheirTypedCodes) {
  nyxid_.Answer("/api/v1/keys", 403, R"({"code": 5})");
  EXPECT_EQ(base::ApiCode(ReadInventory(*client_, "bearer").status()), "NYXID_ACCESS_DENIED");
  nyxid_.Answer("/api/v1/keys", 500, "not json");
  EXPECT_EQ(base::ApiCode(ReadInventory(*client_, "bearer").status()), "NYXID_UNAVAILABLE");
}

TEST_F(NyxidClientTest, BodiesThatAreNotJsonOrNestTooDeeplyReadAsNull) {
  nyxid_.Answer("/api/v1/me", 200, "{\"id\":");
  EXPECT_TRUE(client_->GetMe("bearer").body.is_null());
  nyxid_.Answer("/api/v1/me", 200, std::string(10000, '[') + std::string(10000, ']'));
  NyxidReply reply = client_->GetMe("bearer");
  EXPECT_EQ(reply.status, 200);
  EXPECT_TRUE(reply.body.is_null());
  EXPECT_EQ(reply.raw_body.size(), 20000u);
}

TEST(ParseIntrospection, ReadsActiveKindAndSubject) {
  auto active = ParseIntrospection(json::parse(R"({"active": true, "kind": "AgentKey",
      "sub": "u_1", "scope": "proxy:*"})"));
  ASSERT_TRUE(active.ok()) << active.status();
  EXPECT_TRUE(active->active);
  EXPECT_EQ(active->kind, "AgentKey");
  EXPECT_EQ(active->subject, "u_1");
  auto inactive = ParseIntrospection(json::parse(R"({"active": false})"));
  ASSERT_TRUE(inactive.ok());
  EXPECT_FALSE(inactive->active);
}

TEST(ParseIntrospection, WrongTypesAreResponseInvalid) {
  for (const char* text : {R"({"active": "yes"})", R"({})", R"({"active": true, "sub": 7})",
                           R"({"active": true, "kind": ["AgentKey"]})", R"([true])", "null"}) {
    ExpectResponseInvalid(ParseIntrospection(json::parse(text)).status());
  }
}

}  // namespace
}  // namespace aevatar::orchestrator
