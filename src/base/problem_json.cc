#include "base/problem_json.h"

#include <algorithm>

#include "absl/status/status.h"
#include "base/json_read.h"

namespace aevatar::base {
namespace {

bool IsTokenChar(char c, bool allow_dash) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         (allow_dash && c == '-');
}

// The member when it is a string of token characters, 1..kMaxProblemTokenBytes long.
std::string Token(const nlohmann::json& document, std::string_view key, bool allow_dash) {
  std::string value = StringOr(document, key, "");
  if (value.size() > kMaxProblemTokenBytes) return "";
  const bool plain =
      std::all_of(value.begin(), value.end(), [&](char c) { return IsTokenChar(c, allow_dash); });
  return plain ? value : "";
}

// The member when it is a string, cut to kMaxProblemTextBytes, with every
// control byte (C0, DEL) replaced so the text cannot move a terminal's
// cursor or forge a line of its own.
std::string Text(const nlohmann::json& document, std::string_view key) {
  std::string value = StringOr(document, key, "");
  if (value.size() > kMaxProblemTextBytes) value.resize(kMaxProblemTextBytes);
  for (char& c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) c = '?';
  }
  return value;
}

}  // namespace

absl::StatusOr<ProblemDetails> ProblemFromJson(const nlohmann::json& document) {
  if (!document.is_object()) return absl::InvalidArgumentError("the problem is not an object");
  ProblemDetails problem;
  const int64_t status = IntOr(document, "status", 0);
  problem.status = status >= 100 && status <= 599 ? static_cast<int>(status) : 0;
  problem.code = Token(document, "code", /*allow_dash=*/false);
  problem.title = Text(document, "title");
  problem.detail = Text(document, "detail");
  problem.remediation = Text(document, "remediation");
  problem.diagnostic_id = Token(document, "diagnostic_id", /*allow_dash=*/true);
  return problem;
}

absl::StatusOr<ProblemDetails> ParseProblemJson(std::string_view body) {
  absl::StatusOr<nlohmann::json> document = ParseJsonObject(body);
  if (!document.ok()) return document.status();
  return ProblemFromJson(*document);
}

std::string ProblemCodeOf(const nlohmann::json& document) {
  return Token(document, "code", /*allow_dash=*/false);
}

}  // namespace aevatar::base
