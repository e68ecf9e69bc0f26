// The five-field cron parser (UTC) and the `triggers:` list of a workflow.
#include "aevatar/workflow/cron_schedule.h"

#include <string>

#include "aevatar/workflow/workflow_definition.h"
#include "base/api_error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "workflow_test_util.h"

namespace aevatar::orchestrator {
namespace {

using ::testing::HasSubstr;

// 2026-12-02T14:37:00Z (a Wednesday) and friends, in Unix ms.
constexpr int64_t kMinute = 60'000;
constexpr int64_t kDay = 24 * 60 * kMinute;
constexpr int64_t kWed1437 = 1'796'222'220'000;

CronSchedule Must(const std::string& text) {
  auto parsed = CronSchedule::Parse(text);
  EXPECT_TRUE(parsed.ok()) << text << ": " << parsed.status();
  return parsed.ok() ? *parsed : *CronSchedule::Parse("* * * * *");
}

TEST(CronSchedule, ReferenceTimeIsAWednesdayAt1437Utc) {
  // Guards the constants below: Wednesday is day-of-week 3.
  EXPECT_TRUE(Must("37 14 2 12 3").Matches(kWed1437));
  EXPECT_TRUE(Must("37 14 * * 3").Matches(kWed1437 + 59'999));
  EXPECT_FALSE(Must("37 14 * * 3").Matches(kWed1437 + kMinute));
}

TEST(CronSchedule, EveryMinuteMatchesEveryMinute) {
  const CronSchedule every = Must("* * * * *");
  EXPECT_TRUE(every.Matches(kWed1437));
  EXPECT_EQ(every.LatestAtOrBefore(kWed1437 + 30'000), kWed1437);
  EXPECT_EQ(every.NextAfter(kWed1437), kWed1437 + kMinute);
  EXPECT_EQ(every.NextAfter(kWed1437 + 1), kWed1437 + kMinute);
}

TEST(CronSchedule, StepsRangesAndLists) {
  const CronSchedule five = Must("*/5 * * * *");
  EXPECT_EQ(five.LatestAtOrBefore(kWed1437), kWed1437 - 2 * kMinute);       // 14:35
  EXPECT_EQ(five.NextAfter(kWed1437), kWed1437 + 3 * kMinute);              // 14:40
  const CronSchedule office = Must("0 9-17/4 * * 1-5");                     // 09:00, 13:00, 17:00
  EXPECT_EQ(office.LatestAtOrBefore(kWed1437), kWed1437 - (97 * kMinute));  // 13:00
  EXPECT_EQ(office.NextAfter(kWed1437), kWed1437 + 143 * kMinute);          // 17:00
  const CronSchedule list = Must("1,2,40-42 14 * * *");
  EXPECT_EQ(list.LatestAtOrBefore(kWed1437), kWed1437 - 35 * kMinute);  // 14:02
  EXPECT_EQ(list.NextAfter(kWed1437), kWed1437 + 3 * kMinute);          // 14:40
  const CronSchedule from = Must("50/5 * * * *");                       // 50, 55
  EXPECT_EQ(from.NextAfter(kWed1437), kWed1437 + 13 * kMinute);
}

TEST(CronSchedule, SundayIsZeroOrSeven) {
  // 2026-12-06 is a Sunday.
  const int64_t sunday_noon = kWed1437 + 4 * kDay - 157 * kMinute;
  EXPECT_TRUE(Must("0 12 * * 0").Matches(sunday_noon));
  EXPECT_TRUE(Must("0 12 * * 7").Matches(sunday_noon));
  EXPECT_FALSE(Must("0 12 * * 1-6").Matches(sunday_noon));
}

TEST(CronSchedule, RestrictedDayOfMonthAndWeekMatchEither) {
  // "the 1st, or any Wednesday": today (the 2nd, a Wednesday) matches.
  EXPECT_TRUE(Must("37 14 1 * 3").Matches(kWed1437));
  // Day-of-week unrestricted: only the 1st.
  EXPECT_FALSE(Must("37 14 1 * *").Matches(kWed1437));
}

TEST(CronSchedule, LatestLooksBackAcrossDaysAndMonths) {
  // Midnight on the 1st of each month: 2026-12-01T00:00Z.
  const CronSchedule monthly = Must("0 0 1 * *");
  EXPECT_EQ(monthly.LatestAtOrBefore(kWed1437), kWed1437 - kDay - (14 * 60 + 37) * kMinute);
  // 29 February: the latest is 2024-02-29T00:00Z (Unix 1709164800).
  EXPECT_EQ(Must("0 0 29 2 *").LatestAtOrBefore(kWed1437), int64_t{1'709'164'800'000});
}

TEST(CronSchedule, ImpossibleDateNeverFires) {
  const CronSchedule never = Must("0 0 30 2 *");
  EXPECT_FALSE(never.LatestAtOrBefore(kWed1437).has_value());
  EXPECT_FALSE(never.NextAfter(kWed1437).has_value());
}

TEST(CronSchedule, RejectsBadExpressionsNamingTheField) {
  struct Case {
    const char* text;
    const char* names;
  };
  for (const Case& c :
       {Case{"", "five fields"}, Case{"* * * *", "five fields"}, Case{"* * * * * *", "five fields"},
        Case{"60 * * * *", "minute"}, Case{"* 24 * * *", "hour"}, Case{"* * 0 * *", "day-of-month"},
        Case{"* * 32 * *", "day-of-month"}, Case{"* * * 13 *", "month"},
        Case{"* * * * 8", "day-of-week"}, Case{"*/0 * * * *", "step"},
        Case{"5-1 * * * *", "backwards"}, Case{"a * * * *", "numbers"},
        Case{"-1 * * * *", "minute"}, Case{"1,,2 * * * *", "minute"}, Case{"* * * JAN *", "month"},
        Case{"@daily", "five fields"}, Case{"*/ * * * *", "step"}, Case{"+5 * * * *", "minute"}}) {
    auto parsed = CronSchedule::Parse(c.text);
    ASSERT_FALSE(parsed.ok()) << c.text;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr(c.names)) << c.text;
  }
  EXPECT_FALSE(CronSchedule::Parse(std::string(300, '*')).ok());
}

TEST(WorkflowTriggers, ParsesCronAndWebhookIntoTheCanonicalForm) {
  const std::string yaml = R"yaml(
workflow_id: nightly
steps:
  - id: one
    tool: code_execute
    arguments: {language: python, source: "print(1)"}
triggers:
  - cron: "*/5   * * * *"
  - webhook: {}
)yaml";
  const WorkflowDefinition def = wftest::MustParse(yaml);
  ASSERT_EQ(def.triggers.size(), 2u);
  EXPECT_EQ(def.triggers[0].kind, "cron");
  EXPECT_EQ(def.triggers[0].cron, "*/5 * * * *");
  EXPECT_EQ(def.triggers[1].kind, "webhook");
  const nlohmann::json canonical = WorkflowToJson(def);
  EXPECT_EQ(canonical["triggers"],
            nlohmann::json::parse(R"([{"cron": "*/5 * * * *"}, {"webhook": {}}])"));
  auto again = WorkflowFromJson(canonical);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->digest, def.digest);
}

TEST(WorkflowTriggers, NoTriggersKeepsTheDigestOfOlderWorkflows) {
  nlohmann::json tree = wftest::ValidTree();
  auto without = WorkflowFromJson(tree);
  ASSERT_TRUE(without.ok());
  EXPECT_FALSE(WorkflowToJson(*without).contains("triggers"));
  tree["triggers"] = nlohmann::json::array();
  auto empty = WorkflowFromJson(tree);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->digest, without->digest);
}

TEST(WorkflowTriggers, BadTriggersAreTypedAndNameThePath) {
  struct Case {
    const char* triggers;
    const char* path;
  };
  for (const Case& c : {Case{R"([{"cron": "61 * * * *"}])", "triggers[0].cron"},
                        Case{R"([{"cron": 5}])", "triggers[0].cron"},
                        Case{R"([{"webhook": {"secret": "x"}}])", "triggers[0].webhook"},
                        Case{R"([{"cron": "* * * * *", "webhook": {}}])", "triggers[0]"},
                        Case{R"([{"interval": "5m"}])", "triggers[0]"},
                        Case{R"({"cron": "* * * * *"})", "triggers"},
                        Case{R"([{}, {}, {}, {}, {}, {}, {}, {}, {}])", "triggers"}}) {
    nlohmann::json tree = wftest::ValidTree();
    tree["triggers"] = nlohmann::json::parse(c.triggers);
    auto parsed = WorkflowFromJson(tree);
    ASSERT_FALSE(parsed.ok()) << c.triggers;
    EXPECT_EQ(base::ApiCode(parsed.status()), "WORKFLOW_TRIGGER_INVALID") << c.triggers;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(parsed.status().message()),
                ::testing::StartsWith(std::string(c.path) + ":"))
        << c.triggers;
  }
}

}  // namespace
}  // namespace aevatar::orchestrator
