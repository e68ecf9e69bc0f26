// Writes of several threads committed as one SQLite transaction: each write
// still succeeds or fails on its own, and a caller hears back only once the
// shared transaction committed.
#include "store/group_commit.h"

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace aevatar::store {
namespace {

namespace fs = std::filesystem;

class GroupCommitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "group_commit_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    auto db = Database::Open((dir_ / "test.db").string());
    ASSERT_TRUE(db.ok()) << db.status();
    db_.emplace(std::move(*db));
    ASSERT_TRUE(db_->Exec("CREATE TABLE t (v INTEGER PRIMARY KEY)").ok());
    group_.emplace(&*db_, &db_mu_);
  }
  void TearDown() override {
    group_.reset();
    db_.reset();
    fs::remove_all(dir_);
  }

  GroupCommit::Write Insert(int v) {
    return [this, v] { return db_->Run("INSERT INTO t VALUES (?1)", {int64_t{v}}).status(); };
  }
  std::vector<int64_t> Values() {
    absl::MutexLock lock(&db_mu_);
    std::vector<int64_t> values;
    auto stmt = db_->Prepare("SELECT v FROM t ORDER BY v");
    EXPECT_TRUE(stmt.ok());
    while (stmt.ok() && stmt->Step().value_or(false)) values.push_back(stmt->ColumnInt64(0));
    return values;
  }

  // Runs `writes` from a thread each as one group: a first write holds its
  // own group open until every one of them waits for the next.
  std::vector<absl::Status> RunAsOneGroup(const std::vector<GroupCommit::Write>& writes) {
    absl::Notification holding;
    std::thread holder([&] {
      EXPECT_TRUE(group_
                      ->Run([&] {
                        holding.Notify();
                        while (group_->waiting() < writes.size()) std::this_thread::yield();
                        return absl::OkStatus();
                      })
                      .ok());
    });
    holding.WaitForNotification();
    std::vector<absl::Status> results(writes.size());
    std::vector<std::thread> writers;
    for (size_t i = 0; i < writes.size(); ++i) {
      writers.emplace_back([&, i] { results[i] = group_->Run(writes[i]); });
    }
    holder.join();
    for (std::thread& writer : writers) writer.join();
    return results;
  }

  fs::path dir_;
  absl::Mutex db_mu_;
  std::optional<Database> db_;
  std::optional<GroupCommit> group_;
};

TEST_F(GroupCommitTest, WritesThatArriveTogetherShareOneTransaction) {
  const std::vector<absl::Status> results = RunAsOneGroup({Insert(1), Insert(2), Insert(3)});
  for (const absl::Status& result : results) EXPECT_TRUE(result.ok()) << result;
  EXPECT_EQ(Values(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(group_->groups_written(), 2);  // the holder's, then the three together
}

TEST_F(GroupCommitTest, AFailedWriteIsUndoneAloneAndTheOthersCommit) {
  auto half_then_fail = [this]() -> absl::Status {
    if (auto st = db_->Run("INSERT INTO t VALUES (20)").status(); !st.ok()) return st;
    return absl::FailedPreconditionError("the second half did not hold");
  };
  const std::vector<absl::Status> results =
      RunAsOneGroup({Insert(1), half_then_fail, Insert(1), Insert(3)});
  EXPECT_TRUE(results[0].ok() != results[2].ok()) << "one of the two inserts of 1 is a duplicate";
  EXPECT_EQ(results[1].code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(results[3].ok()) << results[3];
  EXPECT_EQ(Values(), (std::vector<int64_t>{1, 3})) << "the failed write's first half stayed";
  EXPECT_EQ(group_->groups_written(), 2);
}

TEST_F(GroupCommitTest, AWriteThatThrowsFailsAloneWithAnInternalError) {
  GroupCommit::Write throws = []() -> absl::Status { throw std::runtime_error("boom"); };
  const std::vector<absl::Status> results = RunAsOneGroup({Insert(1), throws, Insert(2)});
  EXPECT_TRUE(results[0].ok());
  EXPECT_EQ(results[1].code(), absl::StatusCode::kInternal);
  EXPECT_TRUE(results[2].ok());
  EXPECT_EQ(Values(), (std::vector<int64_t>{1, 2}));
}

TEST_F(GroupCommitTest, AWriteThatEndsTheTransactionFailsTheWholeGroup) {
  // As an I/O error or a full disk would: the shared transaction is gone.
  GroupCommit::Write ends = [this] { return db_->Exec("ROLLBACK"); };
  const std::vector<absl::Status> results = RunAsOneGroup({Insert(1), ends, Insert(2)});
  for (const absl::Status& result : results) EXPECT_FALSE(result.ok());
  // The others did not fail themselves: sent again, they would commit.
  EXPECT_EQ(results[0].code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(results[2].code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(Values().empty()) << "a write was reported failed but kept";
  // The next write starts afresh.
  EXPECT_TRUE(group_->Run(Insert(7)).ok());
  EXPECT_EQ(Values(), (std::vector<int64_t>{7}));
}

TEST_F(GroupCommitTest, AWriteThatYieldsAValueGetsItOnlyOnceCommitted) {
  absl::StatusOr<int64_t> count = group_->RunForValue<int64_t>([this]() -> absl::StatusOr<int64_t> {
    if (auto st = db_->Run("INSERT INTO t VALUES (5)").status(); !st.ok()) return st;
    return db_->QueryInt64("SELECT COUNT(*) FROM t", {});
  });
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(*count, 1);
  EXPECT_EQ(Values(), (std::vector<int64_t>{5}));

  // The write's own error comes back, and what it wrote is undone.
  absl::StatusOr<int64_t> refused =
      group_->RunForValue<int64_t>([this]() -> absl::StatusOr<int64_t> {
        if (auto st = db_->Run("INSERT INTO t VALUES (6)").status(); !st.ok()) return st;
        return absl::NotFoundError("no such row");
      });
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kNotFound);
  // A value computed inside a transaction that then failed is never handed out.
  absl::StatusOr<int64_t> lost = group_->RunForValue<int64_t>([this]() -> absl::StatusOr<int64_t> {
    if (auto st = db_->Exec("ROLLBACK"); !st.ok()) return st;
    return 42;
  });
  EXPECT_FALSE(lost.ok());
  EXPECT_EQ(Values(), (std::vector<int64_t>{5}));
}

TEST_F(GroupCommitTest, ManyThreadsWritingAtOnceAllLand) {
  constexpr int kThreads = 8;
  constexpr int kWritesEach = 40;
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kWritesEach; ++i) {
        if (!group_->Run(Insert(t * kWritesEach + i)).ok()) ++failures[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0);
  EXPECT_EQ(Values().size(), static_cast<size_t>(kThreads * kWritesEach));
}

}  // namespace
}  // namespace aevatar::store
