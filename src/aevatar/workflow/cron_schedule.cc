// The five-field cron parser and its slot search (cron_schedule.h).
#include "aevatar/workflow/cron_schedule.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace aevatar::orchestrator {
namespace {

constexpr size_t kMaxExpressionBytes = 256;
constexpr int64_t kMinuteMs = 60'000;
constexpr int64_t kDayMinutes = 24 * 60;
// How far a slot search looks: long enough for any real date (29 February).
constexpr int64_t kSearchDays = 8 * 366;

struct FieldSpec {
  const char* name;
  int min;
  int max;
};
constexpr FieldSpec kFields[] = {
    {"minute", 0, 59}, {"hour", 0, 23},       {"day-of-month", 1, 31},
    {"month", 1, 12},  {"day-of-week", 0, 7},
};

absl::Status FieldError(const FieldSpec& field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("cron ", field.name, " field: ", what));
}

absl::StatusOr<int> Number(const FieldSpec& field, absl::string_view text) {
  int value = 0;
  if (text.empty() || text.size() > 2 || !absl::SimpleAtoi(text, &value) || text[0] == '+' ||
      text[0] == '-') {
    return FieldError(field, "expects numbers");
  }
  if (value < field.min || value > field.max) {
    return FieldError(field,
                      absl::StrCat("values must be between ", field.min, " and ", field.max));
  }
  return value;
}

// The values one field allows, as a list of booleans indexed by value.
absl::StatusOr<std::vector<bool>> ParseField(const FieldSpec& field, absl::string_view text) {
  std::vector<bool> allowed(field.max + 1, false);
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    absl::string_view range = item;
    int step = 1;
    if (size_t slash = item.find('/'); slash != absl::string_view::npos) {
      range = item.substr(0, slash);
      int parsed = 0;
      absl::string_view step_text = item.substr(slash + 1);
      if (step_text.empty() || step_text.size() > 2 || !absl::SimpleAtoi(step_text, &parsed) ||
          step_text[0] == '+' || step_text[0] == '-' || parsed < 1) {
        return FieldError(field, "a step must be a positive number");
      }
      step = parsed;
    }
    int low = field.min;
    int high = field.max;
    if (range != "*") {
      if (size_t dash = range.find('-'); dash != absl::string_view::npos) {
        auto a = Number(field, range.substr(0, dash));
        if (!a.ok()) return a.status();
        auto b = Number(field, range.substr(dash + 1));
        if (!b.ok()) return b.status();
        if (*a > *b) return FieldError(field, "a range must not run backwards");
        low = *a;
        high = *b;
      } else {
        auto a = Number(field, range);
        if (!a.ok()) return a.status();
        low = *a;
        // "N/S" runs from N to the maximum; a bare "N" is one value.
        high = item.find('/') != absl::string_view::npos ? field.max : *a;
      }
    }
    for (int v = low; v <= high; v += step) allowed[v] = true;
  }
  return allowed;
}

// Howard Hinnant's civil_from_days: the (month, day) of a day since 1970-01-01.
void MonthDayOf(int64_t days, int& month, int& day) {
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const int64_t doe = days - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

}  // namespace

absl::StatusOr<CronSchedule> CronSchedule::Parse(std::string_view expression_text) {
  const absl::string_view expression(expression_text.data(), expression_text.size());
  if (expression.size() > kMaxExpressionBytes) {
    return absl::InvalidArgumentError("cron expression is longer than 256 bytes");
  }
  std::vector<absl::string_view> fields =
      absl::StrSplit(expression, absl::ByAnyChar(" \t"), absl::SkipEmpty());
  if (fields.size() != 5) {
    return absl::InvalidArgumentError(
        "cron expression must have five fields: minute hour day-of-month month day-of-week");
  }
  CronSchedule schedule;
  std::vector<bool> parsed[5];
  for (int i = 0; i < 5; ++i) {
    auto field = ParseField(kFields[i], fields[i]);
    if (!field.ok()) return field.status();
    parsed[i] = *std::move(field);
  }
  for (int v = 0; v < 60; ++v) schedule.minutes_[v] = parsed[0][v];
  for (int v = 0; v < 24; ++v) schedule.hours_[v] = parsed[1][v];
  for (int v = 1; v <= 31; ++v) schedule.days_of_month_[v] = parsed[2][v];
  for (int v = 1; v <= 12; ++v) schedule.months_[v] = parsed[3][v];
  for (int v = 0; v <= 7; ++v) {
    if (parsed[4][v]) schedule.days_of_week_[v % 7] = true;
  }
  schedule.day_of_month_restricted_ = fields[2][0] != '*';
  schedule.day_of_week_restricted_ = fields[4][0] != '*';
  return schedule;
}

bool CronSchedule::DayMatches(int64_t day_index) const {
  int month = 0;
  int day = 0;
  MonthDayOf(day_index, month, day);
  if (!months_[month]) return false;
  const bool dom = days_of_month_[day];
  const bool dow =
      days_of_week_[static_cast<size_t>(((day_index % 7) + 11) % 7)];  // 1970-01-01: Thu
  if (day_of_month_restricted_ && day_of_week_restricted_) return dom || dow;
  return dom && dow;
}

bool CronSchedule::Matches(int64_t unix_ms) const {
  const int64_t minute = FloorDiv(unix_ms, kMinuteMs);
  const int64_t day = FloorDiv(minute, kDayMinutes);
  const int64_t in_day = minute - day * kDayMinutes;
  return DayMatches(day) && hours_[in_day / 60] && minutes_[in_day % 60];
}

std::optional<int64_t> CronSchedule::LatestAtOrBefore(int64_t now_ms) const {
  const int64_t now_minute = FloorDiv(now_ms, kMinuteMs);
  const int64_t today = FloorDiv(now_minute, kDayMinutes);
  for (int64_t day = today; day > today - kSearchDays; --day) {
    if (!DayMatches(day)) continue;
    const int64_t last = day == today ? now_minute - day * kDayMinutes : kDayMinutes - 1;
    for (int64_t m = last; m >= 0; --m) {
      if (hours_[m / 60] && minutes_[m % 60]) return (day * kDayMinutes + m) * kMinuteMs;
    }
  }
  return std::nullopt;
}

std::optional<int64_t> CronSchedule::NextAfter(int64_t after_ms) const {
  const int64_t first_minute = FloorDiv(after_ms, kMinuteMs) + 1;
  const int64_t first_day = FloorDiv(first_minute, kDayMinutes);
  for (int64_t day = first_day; day < first_day + kSearchDays; ++day) {
    if (!DayMatches(day)) continue;
    const int64_t from = day == first_day ? first_minute - day * kDayMinutes : 0;
    for (int64_t m = from; m < kDayMinutes; ++m) {
      if (hours_[m / 60] && minutes_[m % 60]) return (day * kDayMinutes + m) * kMinuteMs;
    }
  }
  return std::nullopt;
}

}  // namespace aevatar::orchestrator
