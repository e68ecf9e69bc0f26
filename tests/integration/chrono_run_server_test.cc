// `chrono-sandbox run --server`: the real CLI against a real `chrono-sandbox
// serve` with a warm Python sandbox. The program's output and exit code pass
// through as in a local run; refusals (no token, a bad one, flags the server
// does not take, bytes JSON cannot carry, no server) exit 2 or 125 with a
// message; the token never appears in what the CLI prints. The server's
// /metrics shows the run took the warm sandbox.
#include <stdlib.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "chrono_client.h"
#include "gtest/gtest.h"
#include "testing/metrics_text.h"
#include "testing/poll.h"
#include "testing/shell_run.h"
#include "testing/temp_dir.h"

namespace aevatar::testing {
namespace {

constexpr char kTokenVariable[] = "CHRONO_SANDBOX_TOKEN";

class ChronoRunServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { chrono_ = new ChronoFixture({"--warm-python", "1"}); }
  static void TearDownTestSuite() {
    delete chrono_;
    chrono_ = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(chrono_->ok());
    token_ = chrono_->issuer().Delegation("cli-user");
    ::setenv(kTokenVariable, token_.c_str(), 1);
  }
  void TearDown() override { ::unsetenv(kTokenVariable); }

  // `chrono-sandbox run --server <url> ARGS`, through a shell; the token
  // comes from the environment this test set.
  ShellRun RunCli(const std::string& args) {
    return RunShell(dir_.path(), BinaryPath("chrono-sandbox") + " run --server " +
                                     chrono_->service().base_url() + " " + args);
  }

  // The value of an unlabelled series in the server's /metrics (-1 if absent).
  static double MetricValue(const std::string& name) {
    return SeriesValue(chrono_->Metrics().body, name).value_or(-1);
  }

  void ExpectNoToken(const ShellRun& run) {
    EXPECT_EQ(run.out.find(token_), std::string::npos);
    EXPECT_EQ(run.err.find(token_), std::string::npos);
  }

  static ChronoFixture* chrono_;
  TempDir dir_;
  std::string token_;
};

ChronoFixture* ChronoRunServerTest::chrono_ = nullptr;

TEST_F(ChronoRunServerTest, APythonRunTakesTheWarmSandboxAndPassesItsResultThrough) {
  ASSERT_TRUE(PollUntil([] { return MetricValue("chrono_warm_python_ready") >= 1; }));
  const double served = MetricValue("chrono_warm_python_served_total");
  const std::string input = dir_.path() + "/input.txt";
  std::ofstream(input) << "from stdin";
  const ShellRun run = RunCli(
      "--language python -c 'import sys\n"
      "print(\"out:\", sys.stdin.read())\n"
      "print(\"err\", file=sys.stderr)\n"
      "sys.exit(3)' --stdin-file " +
      input);
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_EQ(run.out, "out: from stdin\n");
  EXPECT_EQ(run.err, "err\n");
  EXPECT_EQ(MetricValue("chrono_warm_python_served_total"), served + 1);
  ExpectNoToken(run);
}

TEST_F(ChronoRunServerTest, OtherLanguagesEnvAndJsonGoThroughTheServer) {
  const ShellRun bash = RunCli("--language bash -c 'echo \"$GREETING\"; exit 4' --env GREETING=hi");
  EXPECT_EQ(bash.exit_code, 4) << bash.err;
  EXPECT_EQ(bash.out, "hi\n");

  const ShellRun json = RunCli("--language python -c 'print(7)' --json");
  EXPECT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json result = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_TRUE(result.is_object()) << json.out;
  EXPECT_EQ(result.value("stdout", ""), "7\n");
  EXPECT_EQ(result.value("verdict", ""), "ok");
}

TEST_F(ChronoRunServerTest, AWallTimeoutExits124) {
  const ShellRun run =
      RunCli("--language python --timeout-secs 1 -c 'import time\ntime.sleep(30)'");
  EXPECT_EQ(run.exit_code, 124) << run.err;
}

TEST_F(ChronoRunServerTest, RefusalsExitWithAMessageAndRunNothing) {
  ::unsetenv(kTokenVariable);
  const ShellRun no_token = RunCli("--language python -c 'print(1)'");
  EXPECT_EQ(no_token.exit_code, 2);
  EXPECT_NE(no_token.err.find(kTokenVariable), std::string::npos) << no_token.err;
  EXPECT_EQ(no_token.out, "");

  ::setenv(kTokenVariable, "not-a-token", 1);
  const ShellRun bad_token = RunCli("--language python -c 'print(1)'");
  EXPECT_EQ(bad_token.exit_code, 2);
  EXPECT_NE(bad_token.err.find("TOKEN_"), std::string::npos) << bad_token.err;
  EXPECT_NE(bad_token.err.find("diagnostic id"), std::string::npos) << bad_token.err;
  EXPECT_EQ(bad_token.err.find("not-a-token"), std::string::npos) << bad_token.err;

  ::setenv(kTokenVariable, token_.c_str(), 1);
  const ShellRun memory = RunCli("--language python -c 'print(1)' --memory-mb 64");
  EXPECT_EQ(memory.exit_code, 2);
  EXPECT_EQ(memory.out, "");

  const std::string latin1 = dir_.path() + "/latin1.py";
  std::ofstream(latin1, std::ios::binary) << "print('\xe9')\n";
  const ShellRun not_utf8 = RunCli("--language python --file " + latin1);
  EXPECT_EQ(not_utf8.exit_code, 2);
  EXPECT_NE(not_utf8.err.find("UTF-8"), std::string::npos) << not_utf8.err;

  const ShellRun unknown_runtime = RunCli("--language python -c 'print(1)' --runtime nope");
  EXPECT_EQ(unknown_runtime.exit_code, 2);
  EXPECT_NE(unknown_runtime.err.find("UNKNOWN_RUNTIME"), std::string::npos) << unknown_runtime.err;

  const ShellRun zero_timeout = RunCli("--language python -c 'print(1)' --timeout-secs 0");
  EXPECT_EQ(zero_timeout.exit_code, 2);
  EXPECT_NE(zero_timeout.err.find("--timeout-secs"), std::string::npos) << zero_timeout.err;

  // A bearer token never travels in clear text beyond loopback.
  const ShellRun plain_remote = RunShell(
      dir_.path(), BinaryPath("chrono-sandbox") +
                       " run --server http://192.0.2.1:8081 --language python -c 'print(1)'");
  EXPECT_EQ(plain_remote.exit_code, 2);
  EXPECT_NE(plain_remote.err.find("https://"), std::string::npos) << plain_remote.err;

  const ShellRun no_server =
      RunShell(dir_.path(), BinaryPath("chrono-sandbox") +
                                " run --server http://127.0.0.1:1 --language python -c 'print(1)'");
  EXPECT_EQ(no_server.exit_code, 125);
  EXPECT_NE(no_server.err.find("cannot reach"), std::string::npos) << no_server.err;
  for (const ShellRun* run : {&bad_token, &memory, &not_utf8, &unknown_runtime, &zero_timeout,
                              &plain_remote, &no_server}) {
    ExpectNoToken(*run);
  }
}

}  // namespace
}  // namespace aevatar::testing
