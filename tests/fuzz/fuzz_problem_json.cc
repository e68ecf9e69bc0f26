// problem+json bodies as the CLIs and services read them from a peer.
// Properties: no crash or exception; what is kept has the promised shape
// (plain tokens, bounded text without control characters); a problem written
// by http::ProblemResponse from what was read reads back the same.
#include <algorithm>

#include "base/api_error.h"
#include "base/problem_json.h"
#include "fuzz_check.h"
#include "http/problem.h"

using namespace aevatar;

namespace {

bool IsToken(const std::string& text, bool allow_dash) {
  return text.size() <= base::kMaxProblemTokenBytes &&
         std::all_of(text.begin(), text.end(), [&](char c) {
           return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '_' || (allow_dash && c == '-');
         });
}

bool IsDisplayText(const std::string& text) {
  return text.size() <= base::kMaxProblemTextBytes &&
         std::none_of(text.begin(), text.end(), [](char c) {
           const auto byte = static_cast<unsigned char>(c);
           return byte < 0x20 || byte == 0x7f;
         });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto problem = base::ParseProblemJson(fuzz::AsText(data, size));
  if (!problem.ok()) return 0;
  FUZZ_CHECK(IsToken(problem->code, false));
  FUZZ_CHECK(IsToken(problem->diagnostic_id, true));
  FUZZ_CHECK(IsDisplayText(problem->title));
  FUZZ_CHECK(IsDisplayText(problem->detail));
  FUZZ_CHECK(IsDisplayText(problem->remediation));
  FUZZ_CHECK(problem->status == 0 || (problem->status >= 100 && problem->status <= 599));

  // Round trip through the one writer. A detail cut at the length bound may
  // end inside a UTF-8 sequence, which the writer replaces: compared only
  // when it was not cut.
  const std::string code = problem->code.empty() ? "FUZZ" : problem->code;
  const std::string diagnostic_id =
      problem->diagnostic_id.empty() ? "diag_0" : problem->diagnostic_id;
  const http::Response written = http::ProblemResponse(
      base::ApiError(absl::StatusCode::kUnavailable, code, problem->detail), diagnostic_id);
  auto reread = base::ParseProblemJson(written.body);
  FUZZ_CHECK(reread.ok());
  FUZZ_CHECK(reread->code == code);
  FUZZ_CHECK(reread->diagnostic_id == diagnostic_id);
  FUZZ_CHECK(reread->status == written.status);
  if (problem->detail.size() < base::kMaxProblemTextBytes) {
    FUZZ_CHECK(reread->detail == problem->detail);
  }
  return 0;
}
