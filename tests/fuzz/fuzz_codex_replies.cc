// Managed codex_exec's two parsers of outside bytes: chrono-sandbox's
// terminal reply to POST /codex/execute (through the NyxID proxy) and the
// codex_exec tool input a caller sends. Properties: no crash or exception;
// an accepted reply is within the contract's bounds and re-serialises to a
// body that parses to the same result; accepted input is within the tool's
// bounds and yields exactly the three-member chrono request body.
#include "aevatar/codex/codex_exec_args.h"
#include "aevatar/codex/managed_errors.h"
#include "base/api_error.h"
#include "fuzz_check.h"

using namespace aevatar;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::AsText(data, size);
  if (auto result = orchestrator::ParseManagedCodexResult(text); result.ok()) {
    FUZZ_CHECK(result->status == "succeeded" || result->status == "failed" ||
               result->status == "timed_out");
    FUZZ_CHECK(result->target == "managed_sandbox");
    FUZZ_CHECK(result->output.size() <= orchestrator::kMaxManagedOutputBytes);
    FUZZ_CHECK(result->diagnostic_id.rfind("diag_", 0) == 0);
    FUZZ_CHECK(result->status != "succeeded" || result->exit_code == 0);
    auto again = orchestrator::ParseManagedCodexResult(result->ToJson().dump());
    FUZZ_CHECK(again.ok());
    FUZZ_CHECK(again->ToJson() == result->ToJson());
  } else {
    const std::string code = base::ApiCode(result.status());
    FUZZ_CHECK(code == orchestrator::kManagedResponseInvalid ||
               code == orchestrator::kManagedResponseTooLarge);
  }
  if (auto args = orchestrator::ParseCodexExecArgs(text); args.ok()) {
    FUZZ_CHECK(!args->prompt.empty() && args->prompt.size() <= orchestrator::kCodexMaxPromptBytes);
    FUZZ_CHECK(args->timeout_secs >= 1 && args->timeout_secs <= orchestrator::kCodexMaxTimeoutSecs);
    const nlohmann::json body = orchestrator::ManagedCodexRequestBody(*args, "us_1");
    FUZZ_CHECK(body.size() == 3);
  } else {
    FUZZ_CHECK(base::HttpStatusFor(args.status()) == 400);
  }
  return 0;
}
