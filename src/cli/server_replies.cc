#include "cli/server_replies.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/json_read.h"
#include "base/problem_json.h"

namespace aevatar::cli {
namespace {

constexpr int kTimedOutExitCode = 124;

// A required non-empty string of `object`; DataLoss naming `field` otherwise.
absl::Status ReadText(const nlohmann::json& object, std::string_view key, std::string_view field,
                      std::string& out) {
  auto value = base::RequiredString(object, key);
  if (!value.ok() || value->empty()) {
    return absl::DataLossError(
        absl::StrCat("credentials.json: ", std::string(field), " is not a string"));
  }
  out = *std::move(value);
  return absl::OkStatus();
}

}  // namespace

nlohmann::json ParsedOrNull(std::string_view body) {
  auto parsed = base::ParseJson(body);
  return parsed.ok() ? *std::move(parsed) : nlohmann::json();
}

std::string DescribeProblem(int http_status, std::string_view body) {
  auto problem = base::ParseProblemJson(body);
  if (!problem.ok()) return absl::StrCat("error: HTTP ", http_status, "\n");
  std::string text = absl::StrCat(
      "error: ", problem->code.empty() ? absl::StrCat("HTTP_", http_status) : problem->code, ": ",
      problem->detail, "\n");
  if (!problem->remediation.empty())
    absl::StrAppend(&text, "remediation: ", problem->remediation, "\n");
  absl::StrAppend(&text,
                  "diagnostic id: ", problem->diagnostic_id.empty() ? "-" : problem->diagnostic_id,
                  "\n");
  return text;
}

std::string ProblemSummary(int http_status, std::string_view body) {
  auto problem = base::ParseProblemJson(body);
  if (!problem.ok()) return absl::StrCat("HTTP_ERROR:  (HTTP ", http_status, ")");
  return absl::StrCat(problem->code.empty() ? "HTTP_ERROR" : problem->code, ": ", problem->detail,
                      " (HTTP ", http_status,
                      problem->diagnostic_id.empty() ? "" : ", diagnostic_id ",
                      problem->diagnostic_id, ")");
}

nlohmann::json ProblemObject(int http_status, std::string_view body) {
  auto problem = base::ParseProblemJson(body);
  nlohmann::json object = {
      {"code", "HTTP_ERROR"}, {"detail", ""}, {"status", http_status}, {"diagnostic_id", nullptr}};
  if (!problem.ok()) return object;
  if (!problem->code.empty()) object["code"] = problem->code;
  object["detail"] = problem->detail;
  if (!problem->diagnostic_id.empty()) object["diagnostic_id"] = problem->diagnostic_id;
  if (!problem->remediation.empty()) object["remediation"] = problem->remediation;
  return object;
}

nlohmann::json LocalProblemObject(std::string code, std::string detail) {
  return {{"code", std::move(code)}, {"detail", std::move(detail)}, {"diagnostic_id", nullptr}};
}

int ExecExitCode(const nlohmann::json& result) {
  if (base::BoolOr(result, "timed_out", false)) return kTimedOutExitCode;
  const int64_t code = base::IntOr(result, "exit_code", 1);
  return code >= 0 && code <= 255 ? static_cast<int>(code) : 1;
}

std::string ExecFailureSummary(const nlohmann::json& result) {
  const bool timed_out = base::BoolOr(result, "timed_out", false);
  const int64_t exit_code = base::IntOr(result, "exit_code", -1);
  const bool success = base::BoolOr(result, "success", exit_code == 0);
  if (success && !timed_out && exit_code == 0) return "";
  std::string line = "aevatar exec: " + base::StringOr(result, "verdict", "failed");
  if (timed_out) line += ", timed out";
  if (exit_code >= 0) line += ", exit code " + std::to_string(exit_code);
  if (std::string id = base::StringOr(result, "diagnostic_id", ""); !id.empty()) {
    line += ", diagnostic id " + id;
  }
  return line + "\n";
}

absl::StatusOr<StackCredentials> ParseStackCredentials(const nlohmann::json& document) {
  StackCredentials out;
  const nlohmann::json& operator_entry = base::ObjectOrEmpty(document, "operator");
  const nlohmann::json& demo_entry = base::ObjectOrEmpty(document, "demo");
  for (absl::Status st : {
           ReadText(operator_entry, "password", "operator.password", out.operator_password),
           ReadText(demo_entry, "password", "demo.password", out.demo_password),
           ReadText(document, "introspection_secret", "introspection_secret",
                    out.introspection_secret),
           ReadText(document, "nyxid_url", "nyxid_url", out.nyxid_url),
           ReadText(document, "chrono_url", "chrono_url", out.chrono_url),
           ReadText(document, "aevatar_url", "aevatar_url", out.aevatar_url),
       }) {
    if (!st.ok()) return st;
  }
  for (const auto& [field, url] :
       {std::pair{"nyxid_url", &out.nyxid_url}, std::pair{"chrono_url", &out.chrono_url},
        std::pair{"aevatar_url", &out.aevatar_url}}) {
    if (!absl::StartsWith(*url, "http://") || url->size() <= 7) {
      return absl::DataLossError(
          absl::StrCat("credentials.json: ", field, " is not an http:// URL"));
    }
  }
  return out;
}

}  // namespace aevatar::cli
