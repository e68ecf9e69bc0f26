#ifndef AEVATAR_AEVATAR_WORKFLOW_CRON_SCHEDULE_H_
#define AEVATAR_AEVATAR_WORKFLOW_CRON_SCHEDULE_H_

#include <bitset>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace aevatar::orchestrator {

// A five-field cron schedule, evaluated in UTC (docs/workflows.md, Triggers):
//   minute (0-59)  hour (0-23)  day-of-month (1-31)  month (1-12)
//   day-of-week (0-7, 0 and 7 are Sunday)
// Each field is `*` or a comma-separated list of `N`, `A-B`, `*/S`, `A-B/S`
// or `N/S` (N to the field's maximum, every S). Names (JAN, MON) and the
// extensions @daily, L, W, # and ? are not supported. As in Vixie cron, when
// both day-of-month and day-of-week are restricted (neither starts with
// `*`), a day matches when either does.
//
// Pure and thread-safe; slots are whole UTC minutes in Unix milliseconds.
class CronSchedule {
 public:
  // Parses `expression` (at most 256 bytes). InvalidArgument with a message
  // naming the field and the problem, never quoting the expression.
  static absl::StatusOr<CronSchedule> Parse(std::string_view expression);

  // Whether the minute that holds `unix_ms` is a slot.
  bool Matches(int64_t unix_ms) const;

  // The latest slot at or before `now_ms`, or nullopt when none falls in the
  // eight years before it (a schedule such as 30 February never fires).
  std::optional<int64_t> LatestAtOrBefore(int64_t now_ms) const;

  // The first slot strictly after `after_ms`, or nullopt when none falls in
  // the eight years after it.
  std::optional<int64_t> NextAfter(int64_t after_ms) const;

 private:
  bool DayMatches(int64_t day_index) const;  // days since 1970-01-01

  std::bitset<60> minutes_;
  std::bitset<24> hours_;
  std::bitset<32> days_of_month_;  // bit 0 unused
  std::bitset<13> months_;         // bit 0 unused
  std::bitset<7> days_of_week_;    // 0 = Sunday
  bool day_of_month_restricted_ = false;
  bool day_of_week_restricted_ = false;
};

}  // namespace aevatar::orchestrator

#endif  // AEVATAR_AEVATAR_WORKFLOW_CRON_SCHEDULE_H_
