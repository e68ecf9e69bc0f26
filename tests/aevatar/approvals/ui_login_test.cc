// POST /ui/login through aevatar's real router in front of the NyxID
// stand-in (which refuses every password): a guessing client is slowed by
// aevatar itself, per client and per account name, before its attempts
// reach NyxID, whose own per-address count would otherwise lock every /ui
// user (they all come from aevatar's address).
#include <string>

#include "api_fixture.h"
#include "gtest/gtest.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

class UiLoginTest : public AevatarApiTest {
 protected:
  http::Response Login(const std::string& username, const std::string& client,
                       const std::string& content_type = "application/json") {
    http::Request request;
    request.method = "POST";
    request.path = request.target = "/ui/login";
    request.remote_address = client;
    request.headers.Set("Content-Type", content_type);
    request.body = json{{"username", username}, {"password", "guess"}}.dump();
    return router_->Handle(request);
  }
};

TEST_F(UiLoginTest, AGuessingClientIsThrottledBeforeNyxidSeesMore) {
  for (int i = 0; i < 6; ++i) {
    http::Response refused = Login("user" + std::to_string(i), "203.0.113.7");
    EXPECT_EQ(refused.status, 401) << refused.body;
    EXPECT_EQ(json::parse(refused.body)["code"], "LOGIN_FAILED");
  }
  const int reached = nyxid_.Count();
  http::Response throttled = Login("someone-else", "203.0.113.7");
  EXPECT_EQ(throttled.status, 429);
  EXPECT_EQ(json::parse(throttled.body)["code"], "LOGIN_THROTTLED");
  EXPECT_EQ(throttled.headers.Get("Retry-After").value_or(""), "1");
  EXPECT_EQ(nyxid_.Count(), reached) << "a throttled login must not reach NyxID";
  // Another client is not slowed by this one.
  EXPECT_EQ(Login("user0", "198.51.100.2").status, 401);
}

TEST_F(UiLoginTest, OnlyJsonIsAccepted) {
  http::Response form = Login("demo", "203.0.113.8", "application/x-www-form-urlencoded");
  EXPECT_EQ(form.status, 415);
  EXPECT_EQ(nyxid_.Count(), 0);
}

}  // namespace
}  // namespace aevatar::orchestrator
