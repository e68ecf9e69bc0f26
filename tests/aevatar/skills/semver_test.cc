#include "aevatar/skills/semver.h"

#include <string>
#include <vector>

#include "base/api_error.h"
#include "gtest/gtest.h"

namespace aevatar::orchestrator {
namespace {

TEST(SemVer, ParsesTheFullGrammar) {
  auto v = ParseSemVer("1.22.333-alpha.1.x-y+build.7");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->major, 1u);
  EXPECT_EQ(v->minor, 22u);
  EXPECT_EQ(v->patch, 333u);
  EXPECT_EQ(v->prerelease, (std::vector<std::string>{"alpha", "1", "x-y"}));
  EXPECT_EQ(v->build, "build.7");
  EXPECT_TRUE(ParseSemVer("0.0.0").ok());
  EXPECT_TRUE(ParseSemVer("1.0.0+20130313144700").ok());
  EXPECT_TRUE(ParseSemVer("1.0.0-0A.is.legal").ok());
}

TEST(SemVer, RefusesWhatTheGrammarDoesNotAdmitAs400) {
  for (const char* bad : {"", "1", "1.0", "1.0.0.0", "v1.0.0", "01.0.0", "1.02.0", "1.0.00",
                          "1.0.0-", "1.0.0-01", "1.0.0-a..b", "1.0.0+", "1.0.0+a_b", "1.0.0-é",
                          "-1.0.0", "1.0.0 ", "99999999999999999999.0.0"}) {
    auto v = ParseSemVer(bad);
    EXPECT_FALSE(v.ok()) << bad;
    EXPECT_EQ(base::ApiCode(v.status()), "SKILL_VERSION_INVALID") << bad;
    EXPECT_EQ(base::HttpStatusFor(v.status()), 400) << bad;
  }
  EXPECT_FALSE(ParseSemVer("1.0.0-" + std::string(80, 'a')).ok());
}

int Compare(const char* a, const char* b) {
  return CompareSemVer(*ParseSemVer(a), *ParseSemVer(b));
}

TEST(SemVer, PrecedenceIsSemVerSection11) {
  // The example chain of semver.org, each lower than the next.
  const std::vector<const char*> chain = {"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta",
                                          "1.0.0-beta",  "1.0.0-beta.2",  "1.0.0-beta.11",
                                          "1.0.0-rc.1",  "1.0.0",         "1.0.1",
                                          "1.1.0",       "2.0.0",         "10.0.0"};
  for (size_t i = 0; i + 1 < chain.size(); ++i) {
    EXPECT_LT(Compare(chain[i], chain[i + 1]), 0) << chain[i] << " < " << chain[i + 1];
    EXPECT_GT(Compare(chain[i + 1], chain[i]), 0) << chain[i + 1] << " > " << chain[i];
  }
  EXPECT_EQ(Compare("1.0.0+a", "1.0.0+b"), 0);  // build metadata has no precedence
}

}  // namespace
}  // namespace aevatar::orchestrator
