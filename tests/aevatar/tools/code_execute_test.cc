#include "aevatar/tools/code_execute.h"

#include <string>

#include "aevatar/clients/execution_replies.h"
#include "base/api_error.h"
#include "gtest/gtest.h"

// The interactive code_execute answer built from the executor's reply.
namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

constexpr char kDiagnosticId[] = "diag_0123456789abcdef";

NyxidReply Reply(int status, json body) {
  NyxidReply reply;
  reply.status = status;
  reply.raw_body = body.dump();
  reply.body = std::move(body);
  return reply;
}

TEST(InteractiveResult, ForwardsTheExecutorsResult) {
  auto result = InteractiveResult(
      Reply(200, json::parse(R"({"success": true, "exit_code": 0, "stdout": "hi", "stderr": "",
                                 "execution_time_ms": 12, "timed_out": false, "verdict": "ok",
                                 "stdout_truncated": false, "stderr_truncated": false})")),
      kDiagnosticId);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ((*result)["stdout"], "hi");
  EXPECT_EQ((*result)["exit_code"], 0);
  EXPECT_EQ((*result)["verdict"], "ok");
  EXPECT_EQ((*result)["diagnostic_id"], kDiagnosticId);
}

TEST(InteractiveResult, AMalformedResultIsResponseInvalidNotACrash) {
  // {"stdout": 5} made result.value("stdout", "") throw out of the handler.
  for (const char* text : {R"({"success": true, "stdout": 5, "stderr": ""})",
                           R"({"success": "yes", "stdout": "", "stderr": ""})",
                           R"({"success": true, "stdout": "", "stderr": "", "exit_code": "0"})",
                           R"([1, 2])", "null"}) {
    auto result = InteractiveResult(Reply(200, json::parse(text)), kDiagnosticId);
    ASSERT_FALSE(result.ok()) << text;
    EXPECT_EQ(base::ApiCode(result.status()), kResponseInvalidCode) << text;
    EXPECT_EQ(base::HttpStatusFor(result.status()), 502);
  }
}

TEST(UpstreamError, KeepsAPlainUpstreamCodeAndDropsAnythingElse) {
  EXPECT_EQ(base::ApiCode(UpstreamError(Reply(429, {{"code", "QUEUE_FULL"}}))), "QUEUE_FULL");
  EXPECT_EQ(base::HttpStatusFor(UpstreamError(Reply(429, {{"code", "QUEUE_FULL"}}))), 429);
  // A code of another type used to throw; one that is not a token is dropped.
  EXPECT_EQ(base::ApiCode(UpstreamError(Reply(502, {{"code", 5}}))), "EXECUTOR_ERROR");
  EXPECT_EQ(base::ApiCode(UpstreamError(Reply(502, {{"code", "A B\nC"}}))), "EXECUTOR_ERROR");
  EXPECT_EQ(base::ApiCode(UpstreamError(Reply(504, json()))), "EXECUTOR_ERROR");
  EXPECT_EQ(base::ApiCode(UpstreamError(Reply(0, json()))), "EXECUTOR_UNREACHABLE");
}

}  // namespace
}  // namespace aevatar::orchestrator
