#include "doubles/responses_script.h"

#include <gtest/gtest.h>

#include <vector>

#include "nlohmann/json.hpp"

namespace aevatar::doubles {
namespace {

using Json = nlohmann::json;

Json UserMessage(const std::string& text) {
  return {{"type", "message"},
          {"role", "user"},
          {"content", Json::array({{{"type", "input_text"}, {"text", text}}})}};
}

std::string Body(const std::vector<Json>& items) {
  Json body = {{"model", "m"}};
  body["input"] = items;
  return body.dump();
}

TEST(ResponsesScript, ReplyWithExactlyAnswersTheRestOfTheLine) {
  const Turn turn = DecideTurn(Body({UserMessage("Reply with exactly CODEX_EXEC_READY  \nmore")}));
  EXPECT_EQ(turn.fault, Fault::kNone);
  EXPECT_TRUE(turn.command.empty());
  EXPECT_EQ(turn.answer, "CODEX_EXEC_READY");
}

TEST(ResponsesScript, ReadsTheUserPromptNotTheDeveloperContext) {
  const Json developer = {
      {"type", "message"},
      {"role", "developer"},
      {"content", Json::array({{{"type", "input_text"}, {"text", "Reply with exactly WRONG"}}})}};
  const Turn turn = DecideTurn(Body({developer, UserMessage("Reply with exactly RIGHT")}));
  EXPECT_EQ(turn.answer, "RIGHT");
}

TEST(ResponsesScript, RunCallsExecCommandThenReportsItsOutput) {
  const Json prompt = UserMessage("Run `python3 fib.py 10` and report its output");
  const Turn first = DecideTurn(Body({prompt}));
  EXPECT_EQ(first.command, "python3 fib.py 10");

  const Json call = {{"type", "function_call"}, {"call_id", "c1"}, {"name", "exec_command"}};
  const Json output = {{"type", "function_call_output"}, {"call_id", "c1"}, {"output", "55\n"}};
  const Turn second = DecideTurn(Body({prompt, call, output}));
  EXPECT_TRUE(second.command.empty());
  EXPECT_EQ(second.answer, "Command output:\n55\n");
}

TEST(ResponsesScript, MarkersSelectFaults) {
  EXPECT_EQ(DecideTurn(Body({UserMessage("[double:500] hi")})).fault, Fault::kServerError);
  EXPECT_EQ(DecideTurn(Body({UserMessage("[double:hang] hi")})).fault, Fault::kHang);
  EXPECT_EQ(DecideTurn(Body({UserMessage("x [double:slow]")})).fault, Fault::kSlow);
  EXPECT_EQ(DecideTurn(Body({UserMessage("[double:malformed]")})).fault, Fault::kMalformed);
  EXPECT_EQ(DecideTurn(Body({UserMessage("[double:other]")})).fault, Fault::kNone);
}

TEST(ResponsesScript, AnythingElseGetsTheDefaultAnswer) {
  EXPECT_EQ(DecideTurn(Body({UserMessage("write me a poem")})).answer, kDefaultAnswer);
  EXPECT_EQ(DecideTurn("not json").answer, kDefaultAnswer);
  EXPECT_EQ(DecideTurn(R"({"input": "a string"})").answer, kDefaultAnswer);
  EXPECT_EQ(DecideTurn(R"({"input": [1, null, {"type": 3}]})").answer, kDefaultAnswer);
}

}  // namespace
}  // namespace aevatar::doubles
