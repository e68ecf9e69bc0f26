#include "base/log.h"

#include <unistd.h>

#include <string>

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

TEST(Log, WritesOneJsonLinePerCallThroughTheRedactor) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ConfigureLog(LogLevel::kInfo, fds[1]);
  Log(LogLevel::kDebug, "dropped", "");
  Log(LogLevel::kInfo, "run.finished", "op_1", {{"leak", "Bearer abc.def"}, {"verdict", "ok"}});
  ConfigureLog(LogLevel::kInfo, 2);
  ::close(fds[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof(buf))) > 0;) text.append(buf, n);
  ::close(fds[0]);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.find('\n'), text.size() - 1) << "exactly one line expected: " << text;
  auto line = nlohmann::json::parse(text);
  EXPECT_EQ(line["event"], "run.finished");
  EXPECT_EQ(line["tag"], "op_1");
  EXPECT_EQ(line["verdict"], "ok");
  EXPECT_EQ(text.find("abc.def"), std::string::npos);
}

}  // namespace
}  // namespace aevatar::base
