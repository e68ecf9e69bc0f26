#include "os/atomic_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace aevatar::os {
namespace {

namespace fs = std::filesystem;

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/atomic_file_test.XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Read(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  // Every entry of the directory: no temporary file may be left behind.
  std::set<std::string> Entries() {
    std::set<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) names.insert(entry.path().filename());
    return names;
  }

  std::string dir_;
};

TEST_F(AtomicFileTest, WritesWithTheModeAndLeavesNoTemporaryFile) {
  const std::string path = dir_ + "/secret.json";
  ::umask(022);
  ASSERT_TRUE(WriteFileAtomically(path, "first", 0600).ok());
  EXPECT_EQ(Read(path), "first");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(Entries(), std::set<std::string>{"secret.json"});
}

TEST_F(AtomicFileTest, ReplacesAnExistingFileWhole) {
  const std::string path = dir_ + "/session.json";
  ASSERT_TRUE(WriteFileAtomically(path, std::string(10000, 'a'), 0600).ok());
  ASSERT_TRUE(WriteFileAtomically(path, "short", 0640).ok());
  EXPECT_EQ(Read(path), "short");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_EQ(Entries().size(), 1u);
}

TEST_F(AtomicFileTest, ASymlinkAtThePathIsReplacedNotWrittenThrough) {
  const std::string victim = dir_ + "/victim";
  { std::ofstream(victim) << "untouched"; }
  const std::string path = dir_ + "/link";
  ASSERT_EQ(::symlink(victim.c_str(), path.c_str()), 0);
  ASSERT_TRUE(WriteFileAtomically(path, "new", 0600).ok());
  EXPECT_EQ(Read(victim), "untouched");
  EXPECT_FALSE(fs::is_symlink(path));
  EXPECT_EQ(Read(path), "new");
}

TEST_F(AtomicFileTest, IfExistsFailKeepsTheExistingFile) {
  const std::string path = dir_ + "/key";
  ASSERT_TRUE(WriteFileAtomically(path, "one", 0600, IfExists::kFail).ok());
  absl::Status second = WriteFileAtomically(path, "two", 0600, IfExists::kFail);
  EXPECT_TRUE(absl::IsAlreadyExists(second)) << second;
  EXPECT_EQ(Read(path), "one");
  EXPECT_EQ(Entries().size(), 1u);
}

TEST_F(AtomicFileTest, AMissingDirectoryIsAnErrorNamingThePath) {
  absl::Status st = WriteFileAtomically(dir_ + "/no/such/file", "x", 0600);
  EXPECT_TRUE(absl::IsNotFound(st)) << st;
  EXPECT_NE(st.message().find(dir_ + "/no/such/file"), std::string::npos) << st;
}

TEST_F(AtomicFileTest, MakeDirectoriesCreatesParentsAndRefusesAFile) {
  const std::string nested = dir_ + "/a/b/c";
  ASSERT_TRUE(MakeDirectories(nested, 0700).ok());
  EXPECT_TRUE(fs::is_directory(nested));
  EXPECT_TRUE(MakeDirectories(nested, 0700).ok());  // existing is fine
  { std::ofstream(dir_ + "/plain") << "x"; }
  EXPECT_FALSE(MakeDirectories(dir_ + "/plain", 0700).ok());
}

TEST_F(AtomicFileTest, ReadSmallFileIsBounded) {
  const std::string path = dir_ + "/f";
  ASSERT_TRUE(WriteFileAtomically(path, "12345", 0600).ok());
  EXPECT_EQ(*ReadSmallFile(path, 5), "12345");
  EXPECT_TRUE(absl::IsOutOfRange(ReadSmallFile(path, 4).status()));
  EXPECT_TRUE(absl::IsNotFound(ReadSmallFile(dir_ + "/absent", 4).status()));
}

TEST_F(AtomicFileTest, ReadPrivateFileRefusesLooseModesAndLinks) {
  const std::string path = dir_ + "/keys.json";
  ASSERT_TRUE(WriteFileAtomically(path, "{}", 0600).ok());
  EXPECT_EQ(*ReadPrivateFile(path, 100), "{}");
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  EXPECT_TRUE(absl::IsFailedPrecondition(ReadPrivateFile(path, 100).status()));
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  const std::string link = dir_ + "/link.json";
  ASSERT_EQ(::symlink(path.c_str(), link.c_str()), 0);
  EXPECT_FALSE(ReadPrivateFile(link, 100).ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(ReadPrivateFile(dir_, 100).status()));
  EXPECT_TRUE(absl::IsNotFound(ReadPrivateFile(dir_ + "/absent", 100).status()));
}

TEST_F(AtomicFileTest, KeyFileIsCreatedOnceAndReadBack) {
  const std::string path = dir_ + "/at-rest.key";
  auto first = LoadOrCreateKeyFile(path, 32);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->size(), 32u);
  auto again = LoadOrCreateKeyFile(path, 32);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *first);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(AtomicFileTest, KeyFileOfTheWrongSizeIsDataLoss) {
  const std::string path = dir_ + "/bad.key";
  { std::ofstream(path) << "short"; }
  EXPECT_TRUE(absl::IsDataLoss(LoadOrCreateKeyFile(path, 32).status()));
  { std::ofstream(path) << std::string(64, 'k'); }
  EXPECT_TRUE(absl::IsDataLoss(LoadOrCreateKeyFile(path, 32).status()));
}

TEST_F(AtomicFileTest, RacingCreatorsAgreeOnOneKey) {
  const std::string path = dir_ + "/raced.key";
  constexpr int kThreads = 8;
  std::vector<std::string> keys(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      auto key = LoadOrCreateKeyFile(path, 32);
      if (key.ok()) keys[i] = *key;
    });
  }
  for (auto& t : threads) t.join();
  for (const std::string& key : keys) EXPECT_EQ(key, keys[0]);
  EXPECT_EQ(keys[0].size(), 32u);
  EXPECT_EQ(Entries().size(), 1u);
}

}  // namespace
}  // namespace aevatar::os
