// The AuditLog contract, on SQLite and PostgreSQL alike: semantic
// idempotency (duplicate vs conflict), append order, survival across a
// reopen (a restart, or another replica), one row for concurrent appenders
// of one slot on two logs.
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "aevatar/audit/audit_log.h"
#include "audit/terminal_record.h"
#include "gtest/gtest.h"
#include "stores/store_backends.h"

namespace aevatar::orchestrator {
namespace {

using nlohmann::json;

class AuditLogSuite : public ::testing::TestWithParam<TestBackendFactory> {
 protected:
  void SetUp() override {
    backend_ = GetParam()();
    if (IsSkipped()) return;
    ASSERT_NE(backend_, nullptr);
    log_ = OpenOrDie();
    ASSERT_NE(log_, nullptr);
  }

  std::unique_ptr<AuditLog> OpenOrDie() {
    absl::StatusOr<std::unique_ptr<AuditLog>> log = backend_->backend().OpenAudit();
    EXPECT_TRUE(log.ok()) << log.status();
    return log.ok() ? std::move(*log) : nullptr;
  }

  AppendOutcome AppendOrDie(const AuditRecord& r, AuditLog* log = nullptr) {
    absl::StatusOr<AppendOutcome> outcome = (log ? log : log_.get())->Append(r);
    EXPECT_TRUE(outcome.ok()) << outcome.status();
    return outcome.value_or(AppendOutcome::kConflict);
  }

  std::vector<AuditRecord> RunOrDie(const std::string& run_id) {
    absl::StatusOr<std::vector<AuditRecord>> records = log_->ForRun(run_id);
    EXPECT_TRUE(records.ok()) << records.status();
    return records.value_or(std::vector<AuditRecord>{});
  }

  std::unique_ptr<TestBackend> backend_;
  std::unique_ptr<AuditLog> log_;
};

AEVATAR_STORE_SUITE_ON_BOTH_BACKENDS(AuditLogSuite);

TEST_P(AuditLogSuite, AppendAssignsIdTimeAndHashAndStoresFactVerbatim) {
  AuditRecord r = TerminalRecord();
  r.fact["text"] = "naïve ✓ \"quoted\"";
  r.fact["ratio"] = 0.1;
  r.content_hash = "sha256:caller-supplied";  // never trusted
  ASSERT_EQ(AppendOrDie(r), AppendOutcome::kAppended);
  const std::vector<AuditRecord> rows = RunOrDie("run_1");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].record_id.rfind("aud_", 0), 0u) << rows[0].record_id;
  EXPECT_GT(rows[0].recorded_at_ms, 0);
  EXPECT_EQ(rows[0].occurred_at_ms, 1000);
  EXPECT_EQ(rows[0].content_hash, ContentHash(r));
  EXPECT_EQ(rows[0].fact, r.fact);
  EXPECT_EQ(rows[0].trace.traceparent, "00-trace_a-span_a-01");
  EXPECT_EQ(rows[0].correlation_id, "corr_1");
}

TEST_P(AuditLogSuite, TraceOnlyRetryIsDuplicateWithOneRow) {
  AuditRecord first = TerminalRecord();
  first.record_id = "aud_first";
  ASSERT_EQ(AppendOrDie(first), AppendOutcome::kAppended);
  AuditRecord retry = TerminalRecord();
  retry.trace = {"trace_b", "span_b", "00-trace_b-span_b-01", "vendor=b"};
  retry.occurred_at_ms = 99999;
  EXPECT_EQ(AppendOrDie(retry), AppendOutcome::kDuplicate);
  const std::vector<AuditRecord> rows = RunOrDie("run_1");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].record_id, "aud_first");
  EXPECT_EQ(rows[0].trace.trace_id, "trace_a");  // the first delivery's trace stays
}

TEST_P(AuditLogSuite, ChangedCorrelationIsConflictAndNotWritten) {
  ASSERT_EQ(AppendOrDie(TerminalRecord()), AppendOutcome::kAppended);
  AuditRecord changed = TerminalRecord();
  changed.correlation_id = "corr_2";
  EXPECT_EQ(AppendOrDie(changed), AppendOutcome::kConflict);
  const std::vector<AuditRecord> rows = RunOrDie("run_1");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].correlation_id, "corr_1");  // the stored record wins
}

TEST_P(AuditLogSuite, ChangedBusinessIdsAreConflicts) {
  ASSERT_EQ(AppendOrDie(TerminalRecord()), AppendOutcome::kAppended);
  const std::vector<void (*)(AuditRecord&)> changes = {
      [](AuditRecord& r) { r.causation_id = "cause_2"; },
      [](AuditRecord& r) { r.request_id = "req_2"; },
      [](AuditRecord& r) { r.approval_id = ""; },
      [](AuditRecord& r) { r.workflow_id = "wf_2"; },
  };
  for (size_t i = 0; i < changes.size(); ++i) {
    AuditRecord changed = TerminalRecord();
    changes[i](changed);
    EXPECT_NE(ContentHash(changed), ContentHash(TerminalRecord())) << "change " << i;
    EXPECT_EQ(AppendOrDie(changed), AppendOutcome::kConflict) << "change " << i;
  }
  EXPECT_EQ(RunOrDie("run_1").size(), 1u);
}

// call_id is part of the slot (SemanticKey), so a changed call id is never a
// duplicate of the first call: it is a different call and gets its own record.
TEST_P(AuditLogSuite, ChangedCallIdIsNeverADuplicate) {
  ASSERT_EQ(AppendOrDie(TerminalRecord()), AppendOutcome::kAppended);
  AuditRecord other_call = TerminalRecord();
  other_call.call_id = "call_2";
  EXPECT_NE(ContentHash(other_call), ContentHash(TerminalRecord()));
  EXPECT_NE(SemanticKey(other_call), SemanticKey(TerminalRecord()));
  EXPECT_EQ(AppendOrDie(other_call), AppendOutcome::kAppended);
  EXPECT_EQ(AppendOrDie(other_call), AppendOutcome::kDuplicate);
  EXPECT_EQ(RunOrDie("run_1").size(), 2u);
}

TEST_P(AuditLogSuite, DifferentFactIsConflict) {
  ASSERT_EQ(AppendOrDie(TerminalRecord()), AppendOutcome::kAppended);
  AuditRecord changed = TerminalRecord();
  changed.fact["outcome"] = "code_execution_cancel_outcome_uncertain";
  EXPECT_EQ(AppendOrDie(changed), AppendOutcome::kConflict);
  AuditRecord nested = TerminalRecord();
  nested.fact["receipt"]["ms"] = 8826;
  EXPECT_EQ(AppendOrDie(nested), AppendOutcome::kConflict);
  const std::vector<AuditRecord> rows = RunOrDie("run_1");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].fact, TerminalRecord().fact);
}

TEST_P(AuditLogSuite, DifferentSlotsAppend) {
  AuditRecord running = TerminalRecord();
  running.kind = "tool.running";
  AuditRecord other_step = TerminalRecord();
  other_step.step_id = "verify";
  AuditRecord other_run = TerminalRecord();
  other_run.run_id = "run_2";
  AuditRecord stop = TerminalRecord();
  stop.kind = "workflow.stop";
  stop.step_id = "";
  stop.call_id = "";
  for (const AuditRecord& r : {TerminalRecord(), running, other_step, other_run, stop}) {
    EXPECT_EQ(AppendOrDie(r), AppendOutcome::kAppended) << SemanticKey(r);
  }
  EXPECT_EQ(RunOrDie("run_1").size(), 4u);
  EXPECT_EQ(RunOrDie("run_2").size(), 1u);
  EXPECT_TRUE(RunOrDie("run_none").empty());
}

TEST_P(AuditLogSuite, ForRunReturnsAppendOrder) {
  const std::vector<std::string> kinds = {"tool.running", "workflow.stop", "tool.terminal",
                                          "audit.a", "audit.b"};
  for (const std::string& kind : kinds) {
    AuditRecord r = TerminalRecord();
    r.kind = kind;
    r.occurred_at_ms = 5000 - static_cast<int64_t>(kind.size());  // not the order key
    ASSERT_EQ(AppendOrDie(r), AppendOutcome::kAppended);
  }
  const std::vector<AuditRecord> rows = RunOrDie("run_1");
  ASSERT_EQ(rows.size(), kinds.size());
  for (size_t i = 0; i < kinds.size(); ++i) EXPECT_EQ(rows[i].kind, kinds[i]);
}

TEST_P(AuditLogSuite, ReopenFindsEverythingAndKeepsIdempotency) {
  AuditRecord running = TerminalRecord();
  running.kind = "tool.running";
  ASSERT_EQ(AppendOrDie(running), AppendOutcome::kAppended);
  ASSERT_EQ(AppendOrDie(TerminalRecord()), AppendOutcome::kAppended);
  const std::vector<AuditRecord> before = RunOrDie("run_1");
  log_.reset();
  log_ = OpenOrDie();
  const std::vector<AuditRecord> after = RunOrDie("run_1");
  ASSERT_EQ(after.size(), 2u);
  for (size_t i = 0; i < after.size(); ++i) {
    EXPECT_EQ(after[i].record_id, before[i].record_id);
    EXPECT_EQ(after[i].content_hash, before[i].content_hash);
    EXPECT_EQ(after[i].fact, before[i].fact);
  }
  AuditRecord retry = TerminalRecord();
  retry.trace.trace_id = "after_restart";
  EXPECT_EQ(AppendOrDie(retry), AppendOutcome::kDuplicate);
  retry.correlation_id = "corr_changed";
  EXPECT_EQ(AppendOrDie(retry), AppendOutcome::kConflict);
}

TEST_P(AuditLogSuite, TwentyThreadsAppendingSameRecordWriteOneRow) {
  // A second handle on the same file stands in for another process.
  std::unique_ptr<AuditLog> second = OpenOrDie();
  constexpr int kThreads = 20;
  std::vector<AppendOutcome> outcomes(kThreads, AppendOutcome::kConflict);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      AuditRecord r = TerminalRecord();
      r.trace.span_id = "span_" + std::to_string(i);  // each delivery traced apart
      absl::StatusOr<AppendOutcome> outcome = (i % 2 ? second : log_)->Append(r);
      if (outcome.ok()) outcomes[i] = *outcome;
    });
  }
  for (std::thread& t : threads) t.join();
  int appended = 0, duplicates = 0;
  for (AppendOutcome o : outcomes) {
    appended += o == AppendOutcome::kAppended;
    duplicates += o == AppendOutcome::kDuplicate;
  }
  EXPECT_EQ(appended, 1);
  EXPECT_EQ(duplicates, kThreads - 1);
  EXPECT_EQ(RunOrDie("run_1").size(), 1u);
}

TEST_P(AuditLogSuite, FlakyLogFailsThenRecoversAndReplayWritesOneRecord) {
  FlakyAuditLog flaky(log_.get());
  flaky.FailNext(3);
  // The FinalizingAudit replay loop: the same frozen intent, new tracing each time.
  int attempts = 0;
  absl::StatusOr<AppendOutcome> outcome = absl::UnknownError("not run");
  do {
    AuditRecord r = TerminalRecord();
    r.trace.trace_id = "delivery_" + std::to_string(attempts++);
    outcome = flaky.Append(r);
    if (!outcome.ok()) {
      EXPECT_EQ(outcome.status().code(), absl::StatusCode::kUnavailable);
      ASSERT_TRUE(RunOrDie("run_1").empty());  // a failed append wrote nothing
    }
  } while (!outcome.ok() && attempts < 10);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(*outcome, AppendOutcome::kAppended);
  EXPECT_EQ(attempts, 4);
  EXPECT_EQ(flaky.InjectedFailures(), 3);
  // A later redelivery of the same intent is a duplicate, not a second record.
  EXPECT_EQ(AppendOrDie(TerminalRecord(), &flaky), AppendOutcome::kDuplicate);
  absl::StatusOr<std::vector<AuditRecord>> rows = flaky.ForRun("run_1");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].trace.trace_id, "delivery_3");
}

TEST_P(AuditLogSuite, InvalidRecordsAreRejected) {
  AuditRecord no_kind = TerminalRecord();
  no_kind.kind = "";
  EXPECT_EQ(log_->Append(no_kind).status().code(), absl::StatusCode::kInvalidArgument);
  AuditRecord no_run = TerminalRecord();
  no_run.run_id = "";
  EXPECT_EQ(log_->Append(no_run).status().code(), absl::StatusCode::kInvalidArgument);
  AuditRecord bad_utf8 = TerminalRecord();
  bad_utf8.fact["x"] = std::string("\xff\xfe", 2);
  absl::StatusOr<AppendOutcome> bad = log_->Append(bad_utf8);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
  EXPECT_TRUE(RunOrDie("run_1").empty());
}

TEST_P(AuditLogSuite, ARecordIdUsedByAnotherSlotIsAlreadyExists) {
  AuditRecord first = TerminalRecord();
  first.record_id = "aud_fixed";
  ASSERT_EQ(AppendOrDie(first), AppendOutcome::kAppended);
  AuditRecord other = TerminalRecord();
  other.record_id = "aud_fixed";
  other.step_id = "another_step";
  EXPECT_TRUE(absl::IsAlreadyExists(log_->Append(other).status()));
  EXPECT_EQ(RunOrDie("run_1").size(), 1u);
}

}  // namespace
}  // namespace aevatar::orchestrator
