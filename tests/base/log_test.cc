#include "base/log.h"

#include <unistd.h>

#include <random>
#include <regex>
#include <string>
#include <vector>

#include "base/log_context.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace aevatar::base {
namespace {

TEST(Redact, MasksAgentKeysBearersAndJws) {
  const std::string text =
      "key nyxid_ag_AbC123-_x and Bearer s3cr3t.token and eyJhbGciOi.eyJzdWIiOiJ4In0.c2ln end";
  const std::string redacted = Redact(text);
  EXPECT_EQ(redacted.find("nyxid_ag_AbC123"), std::string::npos);
  EXPECT_EQ(redacted.find("s3cr3t.token"), std::string::npos);
  EXPECT_EQ(redacted.find("eyJzdWIiOiJ4In0"), std::string::npos);
  EXPECT_NE(redacted.find("end"), std::string::npos);
}

TEST(Redact, LeavesOrdinaryTextAlone) {
  EXPECT_EQ(Redact("operation op_123 finished: succeeded"), "operation op_123 finished: succeeded");
}

// Redact is a hand-written scan; it must mask exactly what this regular
// expression (its first form) matched, on text made of the pieces that
// start, continue and break secrets.
TEST(Redact, MasksWhatTheRegularExpressionItReplacedMatched) {
  const std::regex pattern(
      R"((nyxid_ag_[A-Za-z0-9_\-]+)|((Bearer|bearer)\s+[A-Za-z0-9._~+/=\-]+)|(eyJ[A-Za-z0-9_\-]*\.[A-Za-z0-9_\-]*\.[A-Za-z0-9_\-]*))");
  const std::vector<std::string> pieces = {
      "nyxid_ag_", "Bearer", "bearer", "eyJ", "eyJhb", ".", "a", "Z9", "_",      "-",    "~",
      "+/=",       " ",      "\t",     "\n",  "\"",    "=", ":", "é",  "nyxid_", "Bear", "ey"};
  std::mt19937 random(20261203);
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    const int length = static_cast<int>(random() % 12);
    for (int p = 0; p < length; ++p) text += pieces[random() % pieces.size()];
    ASSERT_EQ(Redact(text), std::regex_replace(text, pattern, "[redacted]")) << text;
  }
}

// The lines `write` logs to a pipe, in `format`, read back whole.
template <typename Fn>
std::string Captured(LogFormat format, Fn write) {
  int fds[2];
  if (::pipe(fds) != 0) return "";
  ConfigureLog(LogLevel::kInfo, fds[1]);
  SetLogFormat(format);
  write();
  SetLogFormat(LogFormat::kJson);
  ConfigureLog(LogLevel::kInfo, 2);
  ::close(fds[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof(buf))) > 0;) text.append(buf, n);
  ::close(fds[0]);
  return text;
}

TEST(Log, WritesOneJsonLinePerCallThroughTheRedactor) {
  const std::string text = Captured(LogFormat::kJson, [] {
    Log(LogLevel::kDebug, "dropped", "");
    Log(LogLevel::kInfo, "run.finished", "op_1", {{"leak", "Bearer abc.def"}, {"verdict", "ok"}});
  });
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.find('\n'), text.size() - 1) << "exactly one line expected: " << text;
  auto line = nlohmann::json::parse(text);
  EXPECT_EQ(line["event"], "run.finished");
  EXPECT_EQ(line["tag"], "op_1");
  EXPECT_EQ(line["verdict"], "ok");
  EXPECT_EQ(text.find("abc.def"), std::string::npos);
}

TEST(Log, LinesInsideARequestScopeCarryItsRequestId) {
  const std::string text = Captured(LogFormat::kJson, [] {
    Log(LogLevel::kInfo, "before", "");
    {
      ScopedRequestId outer("req_outer");
      {
        ScopedRequestId inner("req_inner");
        Log(LogLevel::kInfo, "inner", "");
      }
      Log(LogLevel::kInfo, "outer", "", {{"diagnostic_id", "diag_00"}});
    }
    Log(LogLevel::kInfo, "after", "");
  });
  std::vector<nlohmann::json> lines;
  for (size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos;
       start = end + 1) {
    lines.push_back(nlohmann::json::parse(text.substr(start, end - start)));
  }
  ASSERT_EQ(lines.size(), 4u) << text;
  EXPECT_FALSE(lines[0].contains("request_id"));
  EXPECT_EQ(lines[1]["request_id"], "req_inner");
  EXPECT_EQ(lines[2]["request_id"], "req_outer");
  EXPECT_EQ(lines[2]["diagnostic_id"], "diag_00");
  EXPECT_FALSE(lines[3].contains("request_id"));
  EXPECT_EQ(CurrentRequestId(), "");
}

TEST(Log, TextFormatIsOneReadableLineWithTheSameFieldsRedacted) {
  const std::string text = Captured(LogFormat::kText, [] {
    ScopedRequestId scope("req_1");
    Log(LogLevel::kWarn, "http.request", "diag_1",
        {{"route", "/x/{id}"},
         {"status", 503},
         {"detail", "two words"},
         {"leak", "nyxid_ag_SECRETSECRET"}});
  });
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.find('\n'), text.size() - 1) << text;
  // ts level event, then key=value pairs.
  EXPECT_NE(text.find(" warn http.request "), std::string::npos) << text;
  EXPECT_NE(text.find("request_id=req_1"), std::string::npos) << text;
  EXPECT_NE(text.find("tag=diag_1"), std::string::npos) << text;
  EXPECT_NE(text.find("route=/x/{id}"), std::string::npos) << text;
  EXPECT_NE(text.find("status=503"), std::string::npos) << text;
  EXPECT_NE(text.find("detail=\"two words\""), std::string::npos) << text;
  EXPECT_EQ(text.find("SECRETSECRET"), std::string::npos) << text;
  EXPECT_NE(text.front(), '{') << "a text line is not a JSON object: " << text;
}

}  // namespace
}  // namespace aevatar::base
