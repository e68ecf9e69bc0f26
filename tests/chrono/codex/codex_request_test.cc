#include "chrono/codex/codex_request.h"

#include <functional>
#include <string>

#include "base/api_error.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace aevatar::chrono {
namespace {

using nlohmann::json;

json Valid() {
  return {{"prompt", "Reply with exactly OK"},
          {"timeout_secs", 30},
          {"model_route", {{"user_service_id", "us_123"}}}};
}

void ExpectInvalid(const std::string& body, const std::string& field) {
  auto parsed = ParseCodexRequest(body);
  ASSERT_FALSE(parsed.ok()) << body;
  EXPECT_EQ(base::ApiCode(parsed.status()), "CODEX_REQUEST_INVALID") << body;
  EXPECT_EQ(base::HttpStatusFor(parsed.status()), 400) << body;
  EXPECT_NE(std::string(parsed.status().message()).find(field), std::string::npos)
      << parsed.status() << " should name " << field;
}

TEST(CodexRequest, ValidBodyParses) {
  auto parsed = ParseCodexRequest(Valid().dump());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->prompt, "Reply with exactly OK");
  EXPECT_EQ(parsed->timeout_secs, 30);
  EXPECT_EQ(parsed->user_service_id, "us_123");
}

TEST(CodexRequest, TimeoutDefaultsTo180) {
  json body = Valid();
  body.erase("timeout_secs");
  auto parsed = ParseCodexRequest(body.dump());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->timeout_secs, 180);
}

TEST(CodexRequest, BoundsOfTimeoutAndPromptAreAccepted) {
  for (int timeout : {1, 600}) {
    json body = Valid();
    body["timeout_secs"] = timeout;
    EXPECT_TRUE(ParseCodexRequest(body.dump()).ok()) << timeout;
  }
  json body = Valid();
  body["prompt"] = std::string(65536, 'p');
  EXPECT_TRUE(ParseCodexRequest(body.dump()).ok());
}

TEST(CodexRequest, EveryBadShapeIsCodexRequestInvalid) {
  ExpectInvalid("not json", "JSON");
  ExpectInvalid("[]", "object");
  ExpectInvalid("\"text\"", "object");
  const std::pair<std::function<void(json&)>, std::string> cases[] = {
      {[](json& b) { b.erase("prompt"); }, "prompt"},
      {[](json& b) { b["prompt"] = ""; }, "prompt"},
      {[](json& b) { b["prompt"] = std::string(65537, 'p'); }, "prompt"},
      {[](json& b) { b["prompt"] = 7; }, "prompt"},
      {[](json& b) { b["prompt"] = json::array({"a"}); }, "prompt"},
      {[](json& b) { b["timeout_secs"] = 0; }, "timeout_secs"},
      {[](json& b) { b["timeout_secs"] = 601; }, "timeout_secs"},
      {[](json& b) { b["timeout_secs"] = -5; }, "timeout_secs"},
      {[](json& b) { b["timeout_secs"] = 18446744073709551615ull; }, "timeout_secs"},
      {[](json& b) { b["timeout_secs"] = 30.5; }, "timeout_secs"},
      {[](json& b) { b["timeout_secs"] = "30"; }, "timeout_secs"},
      {[](json& b) { b["timeout_secs"] = true; }, "timeout_secs"},
      {[](json& b) { b["timeout_secs"] = nullptr; }, "timeout_secs"},
      {[](json& b) { b.erase("model_route"); }, "model_route"},
      {[](json& b) { b["model_route"] = "us_123"; }, "model_route"},
      {[](json& b) { b["model_route"] = json::object(); }, "user_service_id"},
      {[](json& b) { b["model_route"]["user_service_id"] = 5; }, "user_service_id"},
      {[](json& b) { b["model_route"]["user_service_id"] = ""; }, "user_service_id"},
      {[](json& b) { b["model_route"]["user_service_id"] = "a/../b"; }, "user_service_id"},
      {[](json& b) { b["model_route"]["user_service_id"] = "a&x=1"; }, "user_service_id"},
      {[](json& b) { b["model_route"]["user_service_id"] = std::string(129, 'a'); },
       "user_service_id"},
      {[](json& b) { b["model_route"]["model"] = "gpt"; }, "model_route"},
      // Obsolete or caller-chosen knobs are not members of this request.
      {[](json& b) { b["model"] = "gpt-5"; }, "unknown member"},
      {[](json& b) { b["service"] = "chrono-sandbox"; }, "unknown member"},
      {[](json& b) { b["flags"] = json::array({"--yolo"}); }, "unknown member"},
      {[](json& b) { b["config"] = json::object(); }, "unknown member"},
      {[](json& b) {
         b["workspace"] = {{"kind", "empty_git"}};
       },
       "unknown member"},
  };
  for (const auto& [mutate, field] : cases) {
    json body = Valid();
    mutate(body);
    ExpectInvalid(body.dump(), field);
  }
}

TEST(CodexRequest, RunIdIsOptionalAndValidatedButNotFingerprinted) {
  json body = Valid();
  EXPECT_EQ(ParseCodexRequest(body.dump())->run_id, "");
  body["run_id"] = "run_A-1_" + std::string(56, 'x');  // 64 characters
  auto parsed = ParseCodexRequest(body.dump());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->run_id, body["run_id"]);
  EXPECT_EQ(CodexRequestFingerprint(*parsed),
            CodexRequestFingerprint(*ParseCodexRequest(Valid().dump())));
  for (const json& bad :
       {json(""), json(std::string(65, 'a')), json("a/b"), json("a b"), json(7), json(nullptr)}) {
    body["run_id"] = bad;
    ExpectInvalid(body.dump(), "run_id");
  }
}

TEST(CodexRequest, InvalidUtf8PromptIsRejected) {
  ExpectInvalid("{\"prompt\":\"\xff\xfe\",\"model_route\":{\"user_service_id\":\"u\"}}", "JSON");
}

TEST(CodexRequest, MessagesNeverEchoThePrompt) {
  json body = Valid();
  body["prompt"] = "SECRET-PROMPT-TEXT";
  body["extra"] = 1;
  auto parsed = ParseCodexRequest(body.dump());
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(std::string(parsed.status().message()).find("SECRET"), std::string::npos);
}

TEST(CodexRequest, FingerprintIgnoresOrderAndDefaultButNotContent) {
  auto a = ParseCodexRequest(
      R"({"prompt":"p","model_route":{"user_service_id":"u"},"timeout_secs":180})");
  auto b = ParseCodexRequest(R"({"model_route":{"user_service_id":"u"},  "prompt":"p"})");
  auto c = ParseCodexRequest(R"({"model_route":{"user_service_id":"u"},"prompt":"q"})");
  auto d = ParseCodexRequest(R"({"model_route":{"user_service_id":"v"},"prompt":"p"})");
  ASSERT_TRUE(a.ok() && b.ok() && c.ok() && d.ok());
  EXPECT_EQ(CodexRequestFingerprint(*a), CodexRequestFingerprint(*b));
  EXPECT_NE(CodexRequestFingerprint(*a), CodexRequestFingerprint(*c));
  EXPECT_NE(CodexRequestFingerprint(*a), CodexRequestFingerprint(*d));
}

}  // namespace
}  // namespace aevatar::chrono
