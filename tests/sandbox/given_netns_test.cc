// A run in a caller-given network namespace (RunControl::netns_fd) and with
// server files (RunSpec::server_files), for every backend: the run reaches
// the one listener made in that namespace and nothing else; the server file
// is readable and read-only.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "os/netns_listener.h"
#include "sandbox/engine.h"

namespace aevatar::sandbox {
namespace {

class GivenNetnsTest : public ::testing::TestWithParam<BackendKind> {
 protected:
  static void SetUpTestSuite() {
    auto engine = Engine::Create();
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine).release();
  }
  static void TearDownTestSuite() {
    delete engine_;
    engine_ = nullptr;
  }
  void SetUp() override {
    if (GetParam() == BackendKind::kGvisor && ::access("/usr/bin/runsc", X_OK) != 0) {
      GTEST_SKIP() << "runsc is not installed";
    }
  }

  RunResult Run(RunSpec spec, const RunControl& control) {
    spec.limits.wall_timeout_secs = 30;
    spec.backend = GetParam();
    auto result = engine_->Run(spec, control);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : RunResult{};
  }

  static Engine* engine_;
};

Engine* GivenNetnsTest::engine_ = nullptr;

// Prints one line per address: "ok" when a TCP connect succeeded, else the
// error's class name.
constexpr char kProbe[] = R"(
import socket, sys
for host, port in [(h, int(p)) for h, p in (a.split(':') for a in sys.argv[1:] or input().split())]:
    s = socket.socket()
    s.settimeout(3)
    try:
        s.connect((host, port))
        print('ok')
    except Exception as e:
        print(type(e).__name__)
    s.close()
)";

TEST_P(GivenNetnsTest, ReachesOnlyTheListenerOfTheGivenNamespace) {
  auto made = os::MakeNetnsListener();
  ASSERT_TRUE(made.ok()) << made.status();
  RunSpec spec;
  spec.language = Language::kPython;
  spec.source = kProbe;
  // The listener, another loopback port, a metadata address, the outside.
  spec.stdin_data = absl::StrCat("127.0.0.1:", made->port, " 127.0.0.1:", made->port + 1,
                                 " 169.254.169.254:80 1.1.1.1:443\n");
  RunControl control;
  control.netns_fd = made->netns.get();
  RunResult r = Run(spec, control);
  EXPECT_EQ(r.verdict, Verdict::kOk) << r.stderr_data;
  const std::vector<std::string> lines = absl::StrSplit(r.stdout_data, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 4u) << r.stdout_data;
  EXPECT_EQ(lines[0], "ok");
  EXPECT_EQ(lines[1], "ConnectionRefusedError");
  EXPECT_NE(lines[2], "ok");
  EXPECT_NE(lines[3], "ok");
}

TEST_P(GivenNetnsTest, WithoutAGivenNamespaceTheListenerIsUnreachable) {
  auto made = os::MakeNetnsListener();
  ASSERT_TRUE(made.ok()) << made.status();
  RunSpec spec;
  spec.language = Language::kPython;
  spec.source = kProbe;
  spec.stdin_data = absl::StrCat("127.0.0.1:", made->port, "\n");
  RunResult r = Run(spec, {});
  EXPECT_EQ(r.verdict, Verdict::kOk) << r.stderr_data;
  EXPECT_NE(r.stdout_data, "ok\n");
}

TEST_P(GivenNetnsTest, ServerFileIsReadableAndReadOnly) {
  char path[] = "/var/tmp/server-file-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  { std::ofstream(path) << "server file contents\n"; }
  ::chmod(path, 0644);
  RunSpec spec;
  spec.language = Language::kBash;
  spec.source =
      "cat /opt/t/bin/data\n"
      "echo x >> /opt/t/bin/data && echo WROTE\n"
      "touch /opt/t/bin/other 2>/dev/null && echo MADE\n"
      "exit 0\n";
  spec.server_files = {{path, "/opt/t/bin/data", nullptr}};
  RunResult r = Run(spec, {});
  std::remove(path);
  EXPECT_EQ(r.stdout_data, "server file contents\n") << r.stderr_data;
}

// A written server file holds its bytes exactly (NULs and all, larger
// than the native root's base 1 MiB) and is as read-only as a bound one.
TEST_P(GivenNetnsTest, WrittenServerFileHoldsItsBytesReadOnly) {
  auto contents = std::make_shared<std::string>(std::string("head\0tail\n", 10));
  contents->append(3u << 20, 'x');
  RunSpec spec;
  spec.language = Language::kBash;
  spec.source =
      "wc -c < /opt/t/blob\n"
      "head -c 10 /opt/t/blob | od -An -c | tr -s ' '\n"
      "echo x >> /opt/t/blob && echo WROTE\n"
      "exit 0\n";
  spec.server_files = {{"", "/opt/t/blob", contents}};
  RunResult r = Run(spec, {});
  EXPECT_EQ(r.stdout_data, absl::StrCat(contents->size(), "\n h e a d \\0 t a i l \\n\n"))
      << r.stderr_data;
}

// A memory dir is a tmpfs of its own in the workspace, the program's to
// write (bash builtins only: coreutils' stat fails under Debian's gVisor).
TEST_P(GivenNetnsTest, MemoryDirIsTheProgramsOwnTmpfsInTheWorkspace) {
  RunSpec spec;
  spec.language = Language::kBash;
  spec.source =
      "[ -O /workspace/.mem ] && echo OWNED\n"
      "mkdir -p /workspace/.mem/a && echo data > /workspace/.mem/a/f && cat /workspace/.mem/a/f\n"
      "while read -r line; do\n"
      "  case \"$line\" in *' /workspace/.mem '*' - tmpfs '*) echo TMPFS;; esac\n"
      "done < /proc/self/mountinfo\n"
      "exit 0\n";
  spec.memory_dirs = {".mem"};
  RunResult r = Run(spec, {});
  EXPECT_EQ(r.stdout_data, "OWNED\ndata\nTMPFS\n") << r.stderr_data;
}

TEST_P(GivenNetnsTest, MemoryDirsMustBePlainDistinctNames) {
  RunSpec spec;
  spec.language = Language::kBash;
  spec.source = "exit 0";
  spec.backend = GetParam();
  for (const std::vector<std::string>& dirs :
       std::vector<std::vector<std::string>>{{""},
                                             {"."},
                                             {".."},
                                             {"a/b"},
                                             {"/a"},
                                             {std::string(65, 'a')},
                                             {"a", "a"},
                                             {"a", "b", "c", "d", "e"}}) {
    spec.memory_dirs = dirs;
    EXPECT_TRUE(absl::IsInvalidArgument(engine_->Run(spec, {}).status()))
        << (dirs.empty() ? "" : dirs[0]);
  }
}

TEST_P(GivenNetnsTest, ServerFileWithBothHostPathAndContentsIsRejected) {
  RunSpec spec;
  spec.language = Language::kBash;
  spec.source = "exit 0";
  spec.backend = GetParam();
  spec.server_files = {{"/bin/true", "/opt/x", std::make_shared<std::string>("y")}};
  EXPECT_TRUE(absl::IsInvalidArgument(engine_->Run(spec, {}).status()));
}

TEST_P(GivenNetnsTest, ServerFileOutsideOptIsRejected) {
  RunSpec spec;
  spec.language = Language::kBash;
  spec.source = "exit 0";
  spec.backend = GetParam();
  for (const char* where : {"/usr/bin/x", "/opt/../etc/x", "/opt//x", "/opt/", "/workspace/x"}) {
    spec.server_files = {{"/bin/true", where, nullptr}};
    EXPECT_TRUE(absl::IsInvalidArgument(engine_->Run(spec, {}).status())) << where;
  }
  for (const char* host : {"bin/true", "/tmp/x"}) {
    spec.server_files = {{host, "/opt/x", nullptr}};
    EXPECT_TRUE(absl::IsInvalidArgument(engine_->Run(spec, {}).status())) << host;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, GivenNetnsTest,
                         ::testing::Values(BackendKind::kNative, BackendKind::kGvisor),
                         [](const auto& info) { return std::string(BackendName(info.param)); });

}  // namespace
}  // namespace aevatar::sandbox
