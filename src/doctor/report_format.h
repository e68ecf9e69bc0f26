#ifndef AEVATAR_DOCTOR_REPORT_FORMAT_H_
#define AEVATAR_DOCTOR_REPORT_FORMAT_H_

#include <string>

#include "doctor/check.h"
#include "nlohmann/json.hpp"

namespace aevatar::doctor {

// The report for a terminal: one line per check (status, name, detail), a
// "fix:" line under each warning and failure, and a summary line.
std::string FormatTable(const Report& report);

// {"checks":[{"name","status","detail","remediation"}],"ok":bool}; status is
// "pass" | "warn" | "fail", remediation "" for a pass.
nlohmann::json ReportToJson(const Report& report);

}  // namespace aevatar::doctor

#endif  // AEVATAR_DOCTOR_REPORT_FORMAT_H_
