#include "doubles/responses_double.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "http/client.h"
#include "nlohmann/json.hpp"

namespace aevatar::doubles {
namespace {

using Json = nlohmann::json;

std::string PromptBody(const std::string& prompt) {
  const Json message = {{"type", "message"},
                        {"role", "user"},
                        {"content", Json::array({{{"type", "input_text"}, {"text", prompt}}})}};
  return Json{{"model", "m"}, {"stream", true}, {"input", Json::array({message})}}.dump();
}

http::ClientRequest Post(uint16_t port, const std::string& prompt, const std::string& key) {
  http::ClientRequest request;
  request.method = "POST";
  request.url = "http://127.0.0.1:" + std::to_string(port) + "/v1/responses";
  request.headers.Set("Content-Type", "application/json");
  if (!key.empty()) request.headers.Set("Authorization", "Bearer " + key);
  request.body = PromptBody(prompt);
  return request;
}

// The `data:` JSON of each event in an SSE body.
std::vector<Json> DataLines(const std::string& body) {
  std::vector<Json> events;
  size_t at = 0;
  while ((at = body.find("data: ", at)) != std::string::npos) {
    const size_t end = body.find('\n', at);
    events.push_back(Json::parse(body.substr(at + 6, end - at - 6), nullptr, false));
    at = end;
  }
  return events;
}

class ResponsesDoubleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ResponsesDoubleOptions options;
    options.api_key = "provider-key-1";
    options.hang_limit = std::chrono::seconds(30);
    auto started = ResponsesDouble::Start(options);
    ASSERT_TRUE(started.ok()) << started.status();
    double_ = std::move(*started);
  }
  std::unique_ptr<ResponsesDouble> double_;
};

TEST_F(ResponsesDoubleTest, StreamsAFinalAnswerInTheResponsesWireFormat) {
  auto reply = http::Fetch(Post(double_->port(), "Reply with exactly PONG", "provider-key-1"));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->status, 200);
  EXPECT_EQ(reply->headers.Get("Content-Type"), "text/event-stream");
  const std::vector<Json> events = DataLines(reply->body);
  ASSERT_EQ(events.size(), 3u) << reply->body;
  EXPECT_EQ(events[0]["type"], "response.created");
  EXPECT_EQ(events[1]["type"], "response.output_item.done");
  EXPECT_EQ(events[1]["item"]["content"][0]["text"], "PONG");
  EXPECT_EQ(events[2]["type"], "response.completed");
  EXPECT_TRUE(events[2]["response"]["usage"].is_object());
}

TEST_F(ResponsesDoubleTest, AToolCallCarriesTheCommandAsExecCommandArguments) {
  auto reply = http::Fetch(Post(double_->port(), "Run `echo 42`", "provider-key-1"));
  ASSERT_TRUE(reply.ok()) << reply.status();
  const std::vector<Json> events = DataLines(reply->body);
  ASSERT_EQ(events.size(), 3u);
  const Json& item = events[1]["item"];
  EXPECT_EQ(item["type"], "function_call");
  EXPECT_EQ(item["name"], "exec_command");
  EXPECT_EQ(Json::parse(item["arguments"].get<std::string>())["cmd"], "echo 42");
}

TEST_F(ResponsesDoubleTest, RefusesAWrongOrMissingProviderKey) {
  for (const std::string key : {"", "someone-elses-key"}) {
    auto reply = http::Fetch(Post(double_->port(), "Reply with exactly PONG", key));
    ASSERT_TRUE(reply.ok()) << reply.status();
    EXPECT_EQ(reply->status, 401) << key;
  }
}

TEST_F(ResponsesDoubleTest, ScriptedServerErrorAndMalformedStream) {
  auto failed = http::Fetch(Post(double_->port(), "[double:500]", "provider-key-1"));
  ASSERT_TRUE(failed.ok()) << failed.status();
  EXPECT_EQ(failed->status, 500);

  auto malformed = http::Fetch(Post(double_->port(), "[double:malformed]", "provider-key-1"));
  ASSERT_TRUE(malformed.ok()) << malformed.status();
  EXPECT_EQ(malformed->status, 200);
  EXPECT_FALSE(absl::StrContains(malformed->body, "response.completed"));
}

TEST_F(ResponsesDoubleTest, AHangingStreamSendsHeadersAndNoEvent) {
  http::ClientRequest request = Post(double_->port(), "[double:hang]", "provider-key-1");
  request.timeout = std::chrono::milliseconds(1500);
  int status = 0;
  std::string received;
  auto reply = http::FetchStreaming(
      request, [&](const http::ClientResponse& head) { status = head.status; },
      [&](std::string_view chunk) {
        received += chunk;
        return true;
      });
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kDeadlineExceeded) << reply.status();
  EXPECT_EQ(status, 200);
  EXPECT_FALSE(absl::StrContains(received, "data:"));
}

}  // namespace
}  // namespace aevatar::doubles
