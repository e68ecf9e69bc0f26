// The executor's reply bodies as they reach aevatar through the NyxID proxy:
// the 202 receipt, the status and cancel documents, the result, and the
// problem code of an error reply. Properties: no crash or exception; a
// result that parses re-serialises to a document that parses to the same
// value; every accepted status is a known one.
#include "aevatar/clients/execution_replies.h"
#include "aevatar/clients/executions_transport.h"
#include "base/json_read.h"
#include "base/problem_json.h"
#include "fuzz_check.h"

using namespace aevatar;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto document = base::ParseJson(fuzz::AsText(data, size));
  if (!document.ok()) return 0;

  if (auto status = orchestrator::ParseExecutionStatus(*document); status.ok()) {
    FUZZ_CHECK(orchestrator::IsKnownExecutionStatus(status->status));
    FUZZ_CHECK(status->operation_id.empty() ||
               orchestrator::IsValidProviderOperationId(status->operation_id));
  }
  if (auto receipt = orchestrator::ParseExecutionReceipt(*document); receipt.ok()) {
    FUZZ_CHECK(orchestrator::IsValidProviderOperationId(receipt->operation_id));
    FUZZ_CHECK(orchestrator::IsKnownExecutionStatus(receipt->status));
  }
  if (auto result = orchestrator::ParseExecutionResult(*document); result.ok()) {
    FUZZ_CHECK(result->execution_time_ms.value_or(0) >= 0);
    auto again = orchestrator::ParseExecutionResult(result->ToJson());
    FUZZ_CHECK(again.ok());
    FUZZ_CHECK(*again == *result);
  }
  (void)base::ProblemCodeOf(*document);
  return 0;
}
