#include "aevatar/runtime/durable_execution.h"

#include <string>

#include "gtest/gtest.h"
#include "scripted_executor.h"

namespace aevatar::orchestrator {
namespace {

using testing::ScriptedExecutor;

const char kKey[] =
    "tool:v1:operation:00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
const char kOpId[] = "op_k3v9abc";
const char kEtag[] = "\"etag-1\"";
const int64_t kNow = 1'800'000'000'000;

nlohmann::json Receipt(const std::string& id = kOpId) {
  return {{"operation_id", id},
          {"status", "queued"},
          {"status_url", "/executions/" + id},
          {"result_url", "/executions/" + id + "/result"},
          {"cancel_url", "/executions/" + id + "/cancel"},
          {"created_at", "2027-01-15T08:00:00.000Z"},
          {"expires_at", "2027-01-16T08:00:00.000Z"},
          {"done", false}};
}
nlohmann::json StatusDoc(const std::string& status) {
  return {{"operation_id", kOpId}, {"status", status}, {"done", false}};
}
nlohmann::json Problem(int status, const std::string& code) {
  return {{"status", status}, {"code", code}, {"title", "t"}};
}
nlohmann::json ResultDoc(bool success) {
  return {{"operation_id", kOpId},    {"status", success ? "succeeded" : "failed"},
          {"success", success},       {"exit_code", success ? 0 : 3},
          {"stdout", "AEVATAR_OK\n"}, {"verdict", success ? "ok" : "nonzero_exit"}};
}
PendingOperation Known(const std::string& last_status = "queued") {
  PendingOperation pending;
  pending.provider_operation_id = kOpId;
  pending.etag = kEtag;
  pending.last_status = last_status;
  pending.submitted_at_ms = kNow - 5000;
  pending.attempts = 1;
  return pending;
}
TurnDecision Turn(ScriptedExecutor& executor, const PendingOperation& pending = {}) {
  return RunTurn(executor, kKey, nlohmann::json{{"language", "python"}}, pending, kNow);
}

// The outcome codes are read by clients (run state, audit): the other tests
// compare against these constants, so their wire names are pinned here, as
// the spec and docs/aevatar.md spell them.
TEST(DurableExecution, OutcomeCodesKeepTheirWireNames) {
  EXPECT_STREQ(kOutcomeCancelled, "code_execution_cancelled");
  EXPECT_STREQ(kOutcomeUncertain, "code_execution_outcome_uncertain");
  EXPECT_STREQ(kOutcomeIdempotencyConflict, "code_execution_idempotency_conflict");
  EXPECT_STREQ(kOutcomeExpired, "code_execution_expired");
  EXPECT_STREQ(kOutcomeNotFound, "code_execution_operation_not_found");
  EXPECT_STREQ(kOutcomeRejected, "code_execution_rejected");
  EXPECT_STREQ(kOutcomeRouteAccessDenied, "code_execution_route_access_denied");
  EXPECT_STREQ(kOutcomeRouteInactive, "code_execution_route_inactive");
  EXPECT_STREQ(kOutcomeRouteMissing, "code_execution_route_missing");
  EXPECT_STREQ(kOutcomeReceiptInvalid, "code_execution_receipt_invalid");
  EXPECT_STREQ(kOutcomeResponseInvalid, "code_execution_response_invalid");
  EXPECT_STREQ(kOutcomeStepTimeout, "code_execution_step_timeout");
}

TEST(DurableExecution, AcceptedReceiptPersistsOperationIdEtagAndExpiry) {
  ScriptedExecutor executor;
  executor.Then(202, Receipt(), {{"ETag", kEtag}, {"Retry-After", "1"}});
  const TurnDecision d = Turn(executor);
  EXPECT_EQ(d.kind, TurnKind::kReschedule);
  EXPECT_EQ(d.pending.provider_operation_id, kOpId);
  EXPECT_EQ(d.pending.etag, kEtag);
  EXPECT_EQ(d.pending.last_status, "queued");
  EXPECT_EQ(d.pending.expires_at_ms, 1'800'086'400'000);  // 2027-01-16T08:00:00Z
  EXPECT_EQ(d.pending.submitted_at_ms, kNow);
  EXPECT_EQ(d.pending.attempts, 1);
  EXPECT_EQ(d.delay_ms, 1000);
  EXPECT_EQ(d.exchanges, 1);
  ASSERT_EQ(executor.exchanges().size(), 1u);
  EXPECT_EQ(executor.exchanges()[0].key, kKey);
}

TEST(DurableExecution, NotModifiedReschedulesAStatusRead) {
  ScriptedExecutor executor;
  executor.Then(304, nullptr, {{"ETag", kEtag}, {"Retry-After", "2"}});
  const TurnDecision d = Turn(executor, Known("running"));
  EXPECT_EQ(d.kind, TurnKind::kReschedule);
  EXPECT_EQ(d.delay_ms, 2000);
  EXPECT_EQ(d.pending.last_status, "running");
  EXPECT_EQ(d.pending.attempts, 2);
  EXPECT_EQ(executor.Count("Result"), 0);
}

TEST(DurableExecution, IfNoneMatchCarriesThePersistedEtag) {
  ScriptedExecutor executor;
  executor.Then(200, StatusDoc("running"), {{"ETag", "\"etag-2\""}});
  const TurnDecision d = Turn(executor, Known());
  ASSERT_EQ(executor.exchanges().size(), 1u);
  EXPECT_EQ(executor.exchanges()[0].if_none_match, kEtag);
  EXPECT_EQ(d.pending.etag, "\"etag-2\"");  // the next read sends the new one
}

TEST(DurableExecution, QueuedAndRunningReschedule) {
  for (const char* status : {"queued", "running"}) {
    ScriptedExecutor executor;
    executor.Then(200, StatusDoc(status), {{"ETag", kEtag}, {"Retry-After", "1"}});
    const TurnDecision d = Turn(executor, Known());
    EXPECT_EQ(d.kind, TurnKind::kReschedule) << status;
    EXPECT_EQ(d.pending.last_status, status);
    EXPECT_EQ(d.delay_ms, 1000);
    EXPECT_EQ(executor.Count("Result"), 0);
  }
}

TEST(DurableExecution, RetryAfterOfAnHourIsCappedAt30Seconds) {
  ScriptedExecutor executor;
  executor.Then(200, StatusDoc("running"), {{"Retry-After", "3600"}});
  EXPECT_EQ(Turn(executor, Known()).delay_ms, 30000);
}

TEST(DurableExecution, MissingRetryAfterUsesTheDefault) {
  ScriptedExecutor executor;
  executor.Then(200, StatusDoc("queued"));
  EXPECT_EQ(Turn(executor, Known()).delay_ms, kDefaultRetryDelayMs);
}

TEST(DurableExecution, QueueFullReschedulesAndTheRetryUsesTheSameKey) {
  ScriptedExecutor executor;
  executor.Then(429, Problem(429, "QUEUE_FULL"), {{"Retry-After", "5"}});
  executor.Then(202, Receipt(), {{"ETag", kEtag}});
  TurnDecision d = Turn(executor);
  EXPECT_EQ(d.kind, TurnKind::kReschedule);
  EXPECT_EQ(d.delay_ms, 5000);
  EXPECT_TRUE(d.pending.provider_operation_id.empty());
  d = Turn(executor, d.pending);
  EXPECT_EQ(d.pending.provider_operation_id, kOpId);
  ASSERT_EQ(executor.Count("Submit"), 2);
  EXPECT_EQ(executor.exchanges()[0].key, executor.exchanges()[1].key);
}

TEST(DurableExecution, ServiceUnavailableReschedulesTheSameOperation) {
  ScriptedExecutor executor;
  executor.Then(503, Problem(503, "NOT_READY"), {{"Retry-After", "7"}});
  const TurnDecision d = Turn(executor, Known());
  EXPECT_EQ(d.kind, TurnKind::kReschedule);
  EXPECT_EQ(d.delay_ms, 7000);
  EXPECT_EQ(d.pending.provider_operation_id, kOpId);
  EXPECT_EQ(d.pending.etag, kEtag);
  EXPECT_EQ(executor.Count("Submit"), 0);
}

TEST(DurableExecution, DroppedSubmitResponseIsReplayedWithTheSameKeyAndConverges) {
  ScriptedExecutor executor;
  executor.Then(0);  // the executor accepted, but the response never arrived
  executor.Then(202, Receipt(), {{"ETag", kEtag}});  // same key: the same operation
  executor.Then(200, StatusDoc("succeeded"), {{"ETag", "\"etag-9\""}});
  executor.Then(200, ResultDoc(true));
  PendingOperation pending;
  TurnDecision d;
  for (int turn = 0; turn < 5; ++turn) {
    d = Turn(executor, pending);
    if (d.kind != TurnKind::kReschedule) break;
    pending = d.pending;  // what the actor persists before its callback
  }
  EXPECT_EQ(d.kind, TurnKind::kCompleted);
  EXPECT_EQ(d.result["stdout"], "AEVATAR_OK\n");
  ASSERT_EQ(executor.Count("Submit"), 2);
  EXPECT_EQ(executor.exchanges()[0].key, kKey);
  EXPECT_EQ(executor.exchanges()[1].key, kKey);
  EXPECT_EQ(executor.exchanges()[2].operation_id, kOpId);
  EXPECT_EQ(d.pending.attempts, 4);
  EXPECT_TRUE(executor.drained());
}

TEST(DurableExecution, IdempotencyKeyReuseIsTerminal) {
  ScriptedExecutor executor;
  executor.Then(409, Problem(409, "IDEMPOTENCY_KEY_REUSE"));
  const TurnDecision d = Turn(executor);
  EXPECT_EQ(d.kind, TurnKind::kTerminal);
  EXPECT_EQ(d.outcome_code, kOutcomeIdempotencyConflict);
  EXPECT_EQ(executor.exchanges().size(), 1u);
}

TEST(DurableExecution, ExpiredOperationIsTerminal) {
  ScriptedExecutor executor;
  executor.Then(410, Problem(410, "OPERATION_EXPIRED"));
  const TurnDecision d = Turn(executor, Known());
  EXPECT_EQ(d.kind, TurnKind::kTerminal);
  EXPECT_EQ(d.outcome_code, kOutcomeExpired);
}

TEST(DurableExecution, CancelledIsTerminalWithoutAResultFetch) {
  ScriptedExecutor executor;
  executor.Then(200, StatusDoc("cancelled"));
  const TurnDecision d = Turn(executor, Known("running"));
  EXPECT_EQ(d.kind, TurnKind::kTerminal);
  EXPECT_EQ(d.outcome_code, kOutcomeCancelled);
  EXPECT_EQ(executor.Count("Result"), 0);
}

TEST(DurableExecution, OutcomeUncertainIsTerminalWithoutAResultFetch) {
  ScriptedExecutor executor;
  executor.Then(200, StatusDoc("outcome_uncertain"));
  const TurnDecision d = Turn(executor, Known("running"));
  EXPECT_EQ(d.kind, TurnKind::kTerminal);
  EXPECT_EQ(d.outcome_code, kOutcomeUncertain);
  EXPECT_EQ(executor.Count("Result"), 0);
}

TEST(DurableExecution, SucceededAndFailedFetchTheResult) {
  for (bool success : {true, false}) {
    ScriptedExecutor executor;
    executor.Then(200, StatusDoc(success ? "succeeded" : "failed"));
    executor.Then(200, ResultDoc(success));
    const TurnDecision d = Turn(executor, Known("running"));
    EXPECT_EQ(d.kind, TurnKind::kCompleted);
    EXPECT_EQ(d.result["success"], success);  // a failed program is still a completion
    EXPECT_EQ(d.exchanges, 2);
    ASSERT_EQ(executor.Count("Result"), 1);
    EXPECT_EQ(executor.exchanges()[1].operation_id, kOpId);
  }
}

TEST(DurableExecution, ResultSideOperationNotTerminalStaysPending) {
  ScriptedExecutor executor;
  executor.Then(200, StatusDoc("succeeded"), {{"ETag", "\"etag-3\""}});
  executor.Then(409, Problem(409, "OPERATION_NOT_TERMINAL"), {{"Retry-After", "2"}});
  const TurnDecision d = Turn(executor, Known("running"));
  EXPECT_EQ(d.kind, TurnKind::kReschedule);
  EXPECT_EQ(d.delay_ms, 2000);
  EXPECT_EQ(d.pending.provider_operation_id, kOpId);
}

TEST(DurableExecution, NotModifiedAfterATerminalStatusFetchesTheResultAgain) {
  // A terminal status whose result fetch failed must not turn into 304s forever.
  ScriptedExecutor executor;
  executor.Then(200, StatusDoc("failed"), {{"ETag", "\"etag-4\""}});
  executor.Then(0);
  executor.Then(304, nullptr, {{"ETag", "\"etag-4\""}});
  executor.Then(200, ResultDoc(false));
  TurnDecision d = Turn(executor, Known("running"));
  ASSERT_EQ(d.kind, TurnKind::kReschedule);
  d = Turn(executor, d.pending);
  EXPECT_EQ(executor.exchanges()[2].if_none_match, "\"etag-4\"");
  EXPECT_EQ(d.kind, TurnKind::kCompleted);
  EXPECT_EQ(d.result["exit_code"], 3);
}

TEST(DurableExecution, NotFoundOnceTheIdIsKnownIsTerminalAndNeverResubmits) {
  ScriptedExecutor executor;
  executor.Then(404, Problem(404, "OPERATION_NOT_FOUND"));
  const TurnDecision d = Turn(executor, Known("running"));
  EXPECT_EQ(d.kind, TurnKind::kTerminal);
  EXPECT_EQ(d.outcome_code, kOutcomeNotFound);
  EXPECT_EQ(d.pending.provider_operation_id, kOpId);
  EXPECT_EQ(executor.Count("Submit"), 0);
  EXPECT_EQ(executor.exchanges().size(), 1u);
}

TEST(DurableExecution, InvalidOperationIdInAReceiptIsRejected) {
  for (const char* bad : {"op_../../admin", "OP_X", "op_", "x_abc", "op_a/b"}) {
    ScriptedExecutor executor;
    executor.Then(202, Receipt(bad), {{"ETag", kEtag}});
    const TurnDecision d = Turn(executor);
    EXPECT_EQ(d.kind, TurnKind::kTerminal) << bad;
    EXPECT_EQ(d.outcome_code, kOutcomeReceiptInvalid);
    EXPECT_TRUE(d.pending.provider_operation_id.empty());
    EXPECT_EQ(executor.exchanges().size(), 1u);  // no status path built from it
  }
  ScriptedExecutor executor;  // a persisted id that fails validation: no exchange at all
  PendingOperation tampered = Known();
  tampered.provider_operation_id = "op_x/../y";
  EXPECT_EQ(Turn(executor, tampered).outcome_code, kOutcomeReceiptInvalid);
  EXPECT_TRUE(executor.exchanges().empty());
}

TEST(DurableExecution, ReceiptStatusUrlPointingElsewhereIsIgnored) {
  ScriptedExecutor executor;
  nlohmann::json receipt = Receipt();
  receipt["status_url"] = "http://attacker.example/executions/op_other";
  receipt["result_url"] = "/api/v1/proxy/other/executions/op_other/result";
  executor.Then(202, receipt, {{"Location", "http://attacker.example/x"}});
  executor.Then(200, StatusDoc("running"));
  TurnDecision d = Turn(executor);
  d = Turn(executor, d.pending);
  ASSERT_EQ(executor.exchanges().size(), 2u);
  EXPECT_EQ(executor.exchanges()[1].operation_id, kOpId);
  EXPECT_EQ(d.pending.ToJson().dump().find("attacker"), std::string::npos);
}

TEST(DurableExecution, DefinitiveRejectionsAreTypedTerminalOutcomes) {
  struct Case {
    int status;
    const char* code;
    const char* outcome;
  };
  for (const Case& c : {Case{400, "INVALID_TIMEOUT", kOutcomeRejected},
                        Case{401, "TOKEN_EXPIRED", kOutcomeRouteAccessDenied},
                        Case{403, "ROUTE_USE_DENIED", kOutcomeRouteAccessDenied},
                        Case{403, "ROUTE_INACTIVE", kOutcomeRouteInactive},
                        Case{404, "USER_SERVICE_NOT_FOUND", kOutcomeRouteMissing},
                        Case{404, "ROUTE_SLUG_MISMATCH", kOutcomeRouteMissing},
                        Case{503, "ASYNC_EXECUTION_UNAVAILABLE", kOutcomeRejected}}) {
    ScriptedExecutor executor;
    executor.Then(c.status, Problem(c.status, c.code));
    const TurnDecision d = Turn(executor);
    EXPECT_EQ(d.kind, TurnKind::kTerminal) << c.status;
    EXPECT_EQ(d.outcome_code, c.outcome) << c.status << " " << c.code;
  }
}

TEST(DurableExecution, MalformedProviderDocumentsEndTheStepTypedWithoutThrowing) {
  // Each reply would have thrown nlohmann::json::type_error (or been polled
  // forever) had it been read with value() or get<>().
  nlohmann::json wrong_status_type = StatusDoc("running");
  wrong_status_type["status"] = 5;
  nlohmann::json stdout_array = ResultDoc(true);
  stdout_array["stdout"] = nlohmann::json::array();
  nlohmann::json exit_code_text = ResultDoc(true);
  exit_code_text["exit_code"] = "zero";
  nlohmann::json success_missing = ResultDoc(true);
  success_missing.erase("success");
  nlohmann::json unknown_result_status = ResultDoc(true);
  unknown_result_status["status"] = "paused";
  struct Case {
    const char* name;
    nlohmann::json status_doc;  // null: the status read answers "succeeded"
    nlohmann::json result_doc;  // null: no result read
    const char* field;          // named in the detail
  };
  for (const Case& c : {Case{"status 5", wrong_status_type, nullptr, "'status'"},
                        Case{"status missing", nlohmann::json::object(), nullptr, "'status'"},
                        Case{"status unknown", StatusDoc("paused"), nullptr, "'status'"},
                        Case{"status array body", nlohmann::json::array(), nullptr, "object"},
                        Case{"stdout []", nullptr, stdout_array, "'stdout'"},
                        Case{"exit_code text", nullptr, exit_code_text, "'exit_code'"},
                        Case{"success missing", nullptr, success_missing, "'success'"},
                        Case{"result status unknown", nullptr, unknown_result_status, "'status'"},
                        Case{"result array", nullptr, nlohmann::json::array({1, 2}), "object"},
                        Case{"result string", nullptr, "text", "object"}}) {
    ScriptedExecutor executor;
    executor.Then(200, c.status_doc.is_null() ? StatusDoc("succeeded") : c.status_doc);
    if (!c.result_doc.is_null()) executor.Then(200, c.result_doc);
    const TurnDecision d = Turn(executor, Known("running"));
    EXPECT_EQ(d.kind, TurnKind::kTerminal) << c.name;
    EXPECT_EQ(d.outcome_code, kOutcomeResponseInvalid) << c.name;
    EXPECT_NE(d.detail.find(c.field), std::string::npos) << c.name << ": " << d.detail;
    EXPECT_TRUE(executor.drained()) << c.name;
  }
  ScriptedExecutor executor;  // a receipt whose status is not a string
  nlohmann::json receipt = Receipt();
  receipt["status"] = nlohmann::json::object();
  executor.Then(202, receipt);
  EXPECT_EQ(Turn(executor).outcome_code, kOutcomeResponseInvalid);
}

TEST(DurableExecution, CompletedResultIsNormalized) {
  ScriptedExecutor executor;
  nlohmann::json doc = ResultDoc(true);
  doc["extra"] = {{"nested", true}};
  doc.erase("stdout");
  executor.Then(200, StatusDoc("succeeded"));
  executor.Then(200, doc);
  const TurnDecision d = Turn(executor, Known("running"));
  ASSERT_EQ(d.kind, TurnKind::kCompleted);
  EXPECT_EQ(d.result["stdout"], "");
  EXPECT_EQ(d.result["status"], "succeeded");
  EXPECT_EQ(d.result["exit_code"], 0);
  EXPECT_FALSE(d.result.contains("extra"));
}

TEST(DurableExecution, DecisionsNeverCarryTheKey) {
  ScriptedExecutor executor;
  executor.Then(409, Problem(409, "IDEMPOTENCY_KEY_REUSE"));
  const TurnDecision d = Turn(executor);
  EXPECT_EQ(d.detail.find(kKey), std::string::npos);
  EXPECT_EQ(d.pending.ToJson().dump().find(kKey), std::string::npos);
}

TEST(BoundedRetryDelay, ParsesCapsAndDefaults) {
  auto delay = [](const char* value, int64_t fallback = 1000) {
    http::Headers headers;
    if (value != nullptr) headers.Set("Retry-After", value);
    return BoundedRetryDelayMs(headers, fallback);
  };
  EXPECT_EQ(delay("3"), 3000);
  EXPECT_EQ(delay(" 3 "), 3000);
  EXPECT_EQ(delay("3600"), 30000);
  EXPECT_EQ(delay("99999999999999999999999"), 30000);  // saturates, no overflow
  EXPECT_EQ(delay("0"), 1);                            // the scheduler rejects zero
  EXPECT_EQ(delay(nullptr), 1000);
  EXPECT_EQ(delay("Wed, 21 Oct 2026 07:28:00 GMT"), 1000);
  EXPECT_EQ(delay("-5"), 1000);
  EXPECT_EQ(delay("1.5"), 1000);
  EXPECT_EQ(delay(nullptr, 0), 1);
  EXPECT_EQ(delay(nullptr, 120000), 30000);
}

TEST(ProgressPollDelay, RetryAfterMsShortensTheDelayButNeverBelowItsFloor) {
  auto delay = [](const char* seconds, const char* ms) {
    http::Headers headers;
    if (seconds != nullptr) headers.Set("Retry-After", seconds);
    if (ms != nullptr) headers.Set("Retry-After-Ms", ms);
    return ProgressPollDelayMs(headers);
  };
  EXPECT_EQ(delay("1", "120"), 120);
  EXPECT_EQ(delay(nullptr, "120"), 120);           // the default second, shortened
  EXPECT_EQ(delay("1", "0"), kMinProgressPollMs);  // no tight loop from a reply
  EXPECT_EQ(delay("1", "3"), kMinProgressPollMs);
  EXPECT_EQ(delay("0", nullptr), kMinProgressPollMs);
  EXPECT_EQ(delay("2", "5000"), 2000);  // only ever shortens
  EXPECT_EQ(delay("3600", nullptr), kMaxRetryDelayMs);
  EXPECT_EQ(delay("1", "-5"), 1000);  // unparsable: ignored
  EXPECT_EQ(delay("1", "1.5"), 1000);
  EXPECT_EQ(delay("1", ""), 1000);
  EXPECT_EQ(delay("1", "99999999999999999999999"), 1000);  // saturates, no overflow
}

TEST(DurableExecution, OnlyAReadOfAnOperationInProgressTakesRetryAfterMs) {
  ScriptedExecutor executor;
  executor.Then(200, StatusDoc("running"), {{"Retry-After", "1"}, {"Retry-After-Ms", "120"}});
  EXPECT_EQ(Turn(executor, Known("running")).delay_ms, 120);
  // An overload's backoff is Retry-After's alone.
  ScriptedExecutor busy;
  busy.Then(429, Problem(429, "QUEUE_FULL"), {{"Retry-After", "5"}, {"Retry-After-Ms", "120"}});
  EXPECT_EQ(Turn(busy).delay_ms, 5000);
}

TEST(OperationIdentity, IsDeterministicPrefixedAndSensitiveToEveryField) {
  const nlohmann::json args = nlohmann::json::parse(R"({"b":1,"a":"x"})");
  const nlohmann::json reordered = nlohmann::json::parse(R"({"a":"x","b":1})");
  const std::string id = OperationIdentity("run_1", "step_a", "sha256:d", args);
  EXPECT_EQ(id, OperationIdentity("run_1", "step_a", "sha256:d", reordered));
  ASSERT_EQ(id.rfind("tool:v1:operation:", 0), 0u);
  const std::string hex = id.substr(18);
  EXPECT_EQ(hex.size(), 64u);
  EXPECT_EQ(hex.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(id, OperationIdentity("run_2", "step_a", "sha256:d", args));
  EXPECT_NE(id, OperationIdentity("run_1", "step_b", "sha256:d", args));
  EXPECT_NE(id, OperationIdentity("run_1", "step_a", "sha256:e", args));
  EXPECT_NE(id, OperationIdentity("run_1", "step_a", "sha256:d", {{"a", "y"}, {"b", 1}}));
  // Field boundaries matter: moving a character between fields changes the id.
  EXPECT_NE(OperationIdentity("ab", "c", "d", args), OperationIdentity("a", "bc", "d", args));
}

TEST(PendingOperationJson, RoundTripsAndRejectsTamperedState) {
  PendingOperation pending = Known("running");
  pending.expires_at_ms = kNow + 86'400'000;
  pending.attempts = 7;
  pending.dispatched = true;
  auto back = PendingOperation::FromJson(pending.ToJson());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->ToJson(), pending.ToJson());
  EXPECT_TRUE(back->dispatched);
  // Before a receipt; and as persisted before `dispatched` existed.
  auto empty = PendingOperation::FromJson(nlohmann::json::object());
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->MayHaveSubmitted());
  PendingOperation dispatched_only;
  dispatched_only.dispatched = true;
  EXPECT_TRUE(dispatched_only.MayHaveSubmitted());

  nlohmann::json bad = pending.ToJson();
  bad["provider_operation_id"] = "op_../x";
  EXPECT_FALSE(PendingOperation::FromJson(bad).ok());
  bad = pending.ToJson();
  bad["attempts"] = "7";
  EXPECT_FALSE(PendingOperation::FromJson(bad).ok());
  bad = pending.ToJson();
  bad["attempts"] = -1;
  EXPECT_FALSE(PendingOperation::FromJson(bad).ok());
  bad = pending.ToJson();
  bad["dispatched"] = "yes";
  EXPECT_FALSE(PendingOperation::FromJson(bad).ok());
  bad = pending.ToJson();
  bad["etag"] = "\"a\"\r\nX-Injected: 1";
  EXPECT_FALSE(PendingOperation::FromJson(bad).ok());
  EXPECT_FALSE(PendingOperation::FromJson(nlohmann::json::array()).ok());
}

}  // namespace
}  // namespace aevatar::orchestrator
