#include "chrono/sqlite_operation_store.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <latch>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "operation_store_suite.h"
#include "store/sqlite_db.h"
#include "testing/temp_dir.h"

namespace aevatar::chrono {
namespace {

namespace fs = std::filesystem;
using S = OperationStatus;

// One private directory per test process, removed at exit. A forked child
// must leave with _exit, or it would remove the parent's files.
std::string FreshPath() {
  static testing::TempDir dir(fs::temp_directory_path().string());
  if (dir.path().empty()) std::abort();
  static std::atomic<int> next{0};
  return (fs::path(dir.path()) / absl::StrCat("store-", next++, ".db")).string();
}

std::unique_ptr<OperationStore> OpenOrNull(const std::string& path) {
  absl::StatusOr<std::unique_ptr<OperationStore>> store = OpenSqliteOperationStore(path);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? std::move(*store) : nullptr;
}

INSTANTIATE_TEST_SUITE_P(Sqlite, OperationStoreSuite, ::testing::Values(OperationStoreFactory([] {
                           return OpenOrNull(FreshPath());
                         })));

TEST(SqliteOperationStore, ReopenFindsQueuedRunningAndFinished) {
  const std::string path = FreshPath();
  Operation queued, running, finished;
  {
    std::unique_ptr<OperationStore> store = OpenOrNull(path);
    ASSERT_NE(store, nullptr);
    for (const Operation& op :
         {NewOperation("op_f", "o", "k1", 1), NewOperation("op_r", "o", "k2", 2),
          NewOperation("op_q", "o", "k3", 3)}) {
      ASSERT_TRUE(store->CreateOrGet(op).ok());
    }
    ASSERT_TRUE(store->ClaimNext("runner-a", 10, kTestLeaseMs).ok());  // op_f
    running = **store->ClaimNext("runner-a", 11, kTestLeaseMs);        // op_r
    finished = *store->Finish("op_f", S::kSucceeded, R"({"stdout":"1\n"})", 12);
    queued = *store->Get("op_q");
  }
  std::unique_ptr<OperationStore> store = OpenOrNull(path);
  ASSERT_NE(store, nullptr);
  ExpectSameOperation(*store->Get("op_q"), queued);
  ExpectSameOperation(*store->Get("op_r"), running);
  ExpectSameOperation(*store->Get("op_f"), finished);
  EXPECT_EQ(finished.result, R"({"stdout":"1\n"})");
  EXPECT_EQ(running.status, S::kRunning);
  EXPECT_EQ(queued.status, S::kQueued);
}

// Reads one byte from `fd`; returns it, or -1 at end of file.
int ReadByte(int fd) {
  char c;
  for (;;) {
    ssize_t n = read(fd, &c, 1);
    if (n == 1) return c;
    if (n == 0 || errno != EINTR) return -1;
  }
}

// Runs in the forked child: the test process has no other threads at this
// point, so SQLite and malloc are usable. Reports progress on `fd`: 'R' once
// the fixed set is written, then '+' after each further creation returned.
// Never returns: it is killed, or _exits on error.
[[noreturn]] void ChildWrites(const std::string& path, int fd) {
  absl::StatusOr<std::unique_ptr<OperationStore>> store = OpenSqliteOperationStore(path);
  if (!store.ok()) _exit(2);
  for (int i = 0; i < 6; ++i) {
    if (!(*store)
             ->CreateOrGet(NewOperation(absl::StrCat("op_", i), "o", std::to_string(i), i))
             .ok())
      _exit(3);
  }
  for (int i = 0; i < 4; ++i) {
    if (!(*store)->ClaimNext("child", 100, kTestLeaseMs).ok()) _exit(4);
  }
  for (int i = 0; i < 2; ++i) {
    if (!(*store)->Finish(absl::StrCat("op_", i), S::kSucceeded, "{\"n\":1}", 200).ok()) _exit(5);
  }
  if (write(fd, "R", 1) != 1) _exit(6);
  for (int i = 0;; ++i) {
    if (!(*store)
             ->CreateOrGet(
                 NewOperation(absl::StrCat("extra_", i), "o", absl::StrCat("e", i), 1000 + i))
             .ok())
      _exit(7);
    if (write(fd, "+", 1) != 1) _exit(8);
  }
}

TEST(SqliteOperationStore, SigkilledWriterLosesNothingItReportedCommitted) {
  const std::string path = FreshPath();
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    ChildWrites(path, fds[1]);
  }
  close(fds[1]);
  ASSERT_EQ(ReadByte(fds[0]), 'R');
  int reported = 0;
  while (reported < 20 && ReadByte(fds[0]) == '+') ++reported;
  ASSERT_EQ(reported, 20);
  kill(pid, SIGKILL);  // mid-way through further writes
  int wstatus = 0;
  ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL) << wstatus;
  while (ReadByte(fds[0]) == '+') ++reported;  // reported before it died
  close(fds[0]);

  std::unique_ptr<OperationStore> store = OpenOrNull(path);
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < 6; ++i) {
    absl::StatusOr<Operation> op = store->Get(absl::StrCat("op_", i));
    ASSERT_TRUE(op.ok()) << op.status();
    const S want = i < 2 ? S::kSucceeded : i < 4 ? S::kRunning : S::kQueued;
    EXPECT_EQ(op->status, want) << i;
    EXPECT_EQ(op->result, i < 2 ? "{\"n\":1}" : "") << i;
    EXPECT_EQ(op->request.empty(), i < 2) << i;
  }
  for (int i = 0; i < reported; ++i) {
    absl::StatusOr<Operation> op = store->Get(absl::StrCat("extra_", i));
    ASSERT_TRUE(op.ok()) << i << ": " << op.status();
    ExpectSameOperation(
        *op, NewOperation(absl::StrCat("extra_", i), "o", absl::StrCat("e", i), 1000 + i));
  }
  {
    absl::StatusOr<store::Database> db = store::Database::Open(path);
    ASSERT_TRUE(db.ok()) << db.status();
    absl::StatusOr<store::Statement> check = db->Prepare("PRAGMA integrity_check");
    ASSERT_TRUE(check.ok() && *check->Step());
    EXPECT_EQ(check->ColumnText(0), "ok");
  }
  // What the service does at its next start: the dead runner's work is not re-run.
  EXPECT_EQ(*store->MarkRunningUncertain("child", 300), 2);
  EXPECT_EQ(*store->CountWithStatus(S::kRunning), 0);
}

TEST(SqliteOperationStore, TwoStoresOnOneFileCreateExactlyOne) {
  const std::string path = FreshPath();
  std::unique_ptr<OperationStore> stores[] = {OpenOrNull(path), OpenOrNull(path)};
  ASSERT_NE(stores[0], nullptr);
  ASSERT_NE(stores[1], nullptr);
  constexpr int kThreads = 24;
  std::atomic<int> created{0}, failed{0};
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      auto outcome = stores[i % 2]->CreateOrGet(NewOperation(absl::StrCat("op_", i), "o", "same"));
      if (!outcome.ok()) ++failed;
      if (outcome.ok() && outcome->created) ++created;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(created.load(), 1);
  EXPECT_EQ(*stores[0]->CountWithStatus(S::kQueued), 1);
}

TEST(SqliteOperationStore, RefusesASchemaFromANewerBinary) {
  const std::string path = FreshPath();
  ASSERT_NE(OpenOrNull(path), nullptr);
  {
    absl::StatusOr<store::Database> db = store::Database::Open(path);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->Exec("PRAGMA user_version = 99").ok());
  }
  absl::StatusOr<std::unique_ptr<OperationStore>> store = OpenSqliteOperationStore(path);
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition) << store.status();
}

}  // namespace
}  // namespace aevatar::chrono
