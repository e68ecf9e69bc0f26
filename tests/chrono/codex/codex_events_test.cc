#include "chrono/codex/codex_events.h"

#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace aevatar::chrono {
namespace {

std::string Completed(const std::string& type, const std::string& text) {
  nlohmann::json item = {{"id", "item_1"}, {"type", type}};
  item[type == "agent_message" ? "text" : "message"] = text;
  return nlohmann::json{{"type", "item.completed"}, {"item", item}}.dump() + "\n";
}

// The shape of a real `codex exec --json` stream (0.171.0).
TEST(CodexEvents, LastAgentMessageIsTheAnswerAndTheMetadataErrorIsIgnored) {
  const std::string stream =
      R"({"type":"thread.started","thread_id":"t"})"
      "\n" +
      Completed("error", "Model metadata for `m` not found.") + R"({"type":"turn.started"})" +
      "\n" + Completed("agent_message", "first") + Completed("command_execution", "ls") +
      Completed("agent_message", "CODEX_EXEC_READY") +
      R"({"type":"turn.completed","usage":{"input_tokens":1}})" + "\n";
  const CodexAnswer answer = ExtractCodexAnswer(stream);
  EXPECT_TRUE(answer.found);
  EXPECT_EQ(answer.text, "CODEX_EXEC_READY");
  EXPECT_FALSE(answer.truncated);
}

TEST(CodexEvents, NoAgentMessageIsNotFound) {
  const std::string stream = Completed("error", "agent_message mentioned in an error") +
                             R"({"type":"turn.failed","error":{"message":"x"}})" + "\n";
  const CodexAnswer answer = ExtractCodexAnswer(stream);
  EXPECT_FALSE(answer.found);
  EXPECT_EQ(answer.text, "");
}

TEST(CodexEvents, BrokenAndForeignLinesAreSkipped) {
  const std::string stream =
      Completed("agent_message", "kept") +
      "{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\"\n" +
      R"({"type":"item.started","item":{"type":"agent_message","text":"no"}})" + "\n" +
      R"({"type":"item.completed","item":{"type":"agent_message"}})" + "\n" +
      R"(["agent_message"])" + "\n" +
      // cut off by the capture limit: no newline, not JSON
      R"({"type":"item.completed","item":{"type":"agent_message","te)";
  const CodexAnswer answer = ExtractCodexAnswer(stream);
  EXPECT_TRUE(answer.found);
  EXPECT_EQ(answer.text, "kept");
}

TEST(CodexEvents, LongAnswerIsCutAtACharacterBoundary) {
  // "é" is two bytes: a cut at an odd byte count must not split one.
  const std::string text = std::string(9, 'a') + "ééé";
  const CodexAnswer answer = ExtractCodexAnswer(Completed("agent_message", text), 12);
  EXPECT_TRUE(answer.found);
  EXPECT_TRUE(answer.truncated);
  EXPECT_EQ(answer.text, std::string(9, 'a') + "é");
  EXPECT_TRUE(nlohmann::json::accept(nlohmann::json(answer.text).dump()));
}

TEST(CodexEvents, DefaultCapIs64KiB) {
  const CodexAnswer answer =
      ExtractCodexAnswer(Completed("agent_message", std::string(100'000, 'x')));
  EXPECT_EQ(answer.text.size(), 64u << 10);
  EXPECT_TRUE(answer.truncated);
}

TEST(Utf8Prefix, KeepsShortTextAndCutsBeforeAPartialCharacter) {
  EXPECT_EQ(Utf8Prefix("abc", 10), "abc");
  EXPECT_EQ(Utf8Prefix("ab\xe2\x82\xac", 4), "ab");  // the euro sign is three bytes
  EXPECT_EQ(Utf8Prefix("ab\xe2\x82\xac", 5), "ab\xe2\x82\xac");
  EXPECT_EQ(Utf8Prefix("\xe2\x82\xac", 0), "");
}

}  // namespace
}  // namespace aevatar::chrono
