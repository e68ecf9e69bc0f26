// WorkflowStore::ListRuns on SQLite and PostgreSQL alike: an owner's runs
// newest first, filtered by phase and workflow, paged by a keyset position
// that later runs do not shift.
#include <memory>
#include <string>
#include <vector>

#include "aevatar/runtime/workflow_store.h"
#include "gtest/gtest.h"
#include "stores/store_backends.h"

namespace aevatar::orchestrator {
namespace {

class WorkflowRunListing : public ::testing::TestWithParam<TestBackendFactory> {
 protected:
  void SetUp() override {
    backend_ = GetParam()();
    if (IsSkipped()) return;
    ASSERT_NE(backend_, nullptr);
    auto store = backend_->backend().OpenWorkflows();
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }

  void Create(const std::string& run_id, int64_t at_ms, const std::string& owner = "alice",
              const std::string& workflow_id = "wf", const std::string& phase = "running") {
    RunRecord run;
    run.run_id = run_id;
    run.owner = owner;
    run.workflow_id = workflow_id;
    run.phase = phase;
    run.state = {{"step_index", 0}};
    run.created_at_ms = at_ms;
    const absl::Status created = store_->CreateRun(run, {0, run_id, at_ms, "run.started", {}},
                                                   Callback{"cb_" + run_id, run_id, at_ms}, {});
    ASSERT_TRUE(created.ok()) << created;
  }

  // The ids ListRuns returns for `query`.
  std::vector<std::string> Listed(const RunListQuery& query) {
    auto runs = store_->ListRuns(query);
    EXPECT_TRUE(runs.ok()) << runs.status();
    std::vector<std::string> ids;
    if (runs.ok()) {
      for (const RunRecord& run : *runs) ids.push_back(run.run_id);
    }
    return ids;
  }

  std::unique_ptr<TestBackend> backend_;
  std::unique_ptr<WorkflowStore> store_;
};

using Ids = std::vector<std::string>;

RunListQuery RunsQuery(const std::string& owner, const std::string& phase = "",
                       const std::string& workflow_id = "", int limit = 50) {
  RunListQuery query;
  query.owner = owner;
  query.phase = phase;
  query.workflow_id = workflow_id;
  query.limit = limit;
  return query;
}

TEST_P(WorkflowRunListing, NewestFirstAndOnlyTheOwners) {
  Create("run_a", 100);
  Create("run_b", 300);
  Create("run_c", 200);
  Create("run_bob", 400, "bob");
  EXPECT_EQ(Listed(RunsQuery("alice")), (Ids{"run_b", "run_c", "run_a"}));
  EXPECT_EQ(Listed(RunsQuery("bob")), (Ids{"run_bob"}));
  EXPECT_TRUE(Listed(RunsQuery("carol")).empty());
  auto runs = store_->ListRuns(RunsQuery("alice", "", "", 1));
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].owner, "alice");
  EXPECT_EQ((*runs)[0].workflow_id, "wf");
  EXPECT_EQ((*runs)[0].phase, "running");
  EXPECT_EQ((*runs)[0].created_at_ms, 300);
  EXPECT_EQ((*runs)[0].state.value("step_index", -1), 0);
}

TEST_P(WorkflowRunListing, FiltersByPhaseAndWorkflow) {
  Create("run_1", 100, "alice", "build", "succeeded");
  Create("run_2", 200, "alice", "build", "failed");
  Create("run_3", 300, "alice", "deploy", "succeeded");
  Create("run_4", 400, "bob", "build", "succeeded");
  EXPECT_EQ(Listed(RunsQuery("alice", "succeeded")), (Ids{"run_3", "run_1"}));
  EXPECT_EQ(Listed(RunsQuery("alice", "", "build")), (Ids{"run_2", "run_1"}));
  EXPECT_EQ(Listed(RunsQuery("alice", "succeeded", "build")), (Ids{"run_1"}));
  EXPECT_TRUE(Listed(RunsQuery("alice", "stopped")).empty());
}

TEST_P(WorkflowRunListing, PagesFollowTheCursorAndTiesBreakByRunId) {
  // Three runs in one millisecond: the run id orders them.
  Create("run_t1", 500);
  Create("run_t3", 500);
  Create("run_t2", 500);
  Create("run_old", 100);
  Ids seen;
  RunListQuery query = RunsQuery("alice", "", "", 2);
  for (int page = 0; page < 10; ++page) {
    auto runs = store_->ListRuns(query);
    ASSERT_TRUE(runs.ok()) << runs.status();
    for (const RunRecord& run : *runs) seen.push_back(run.run_id);
    if (runs->size() < 2) break;
    query.after = RunListPosition{runs->back().created_at_ms, runs->back().run_id};
    // A run started while the listing is paged through is newer than every
    // cursor: it never appears in, or shifts, the later pages.
    if (page == 0) Create("run_new", 900);
  }
  EXPECT_EQ(seen, (Ids{"run_t3", "run_t2", "run_t1", "run_old"}));
}

AEVATAR_STORE_SUITE_ON_BOTH_BACKENDS(WorkflowRunListing);

}  // namespace
}  // namespace aevatar::orchestrator
