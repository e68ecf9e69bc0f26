// `chrono-sandbox serve --config FILE`: the real binary takes its listen
// address, state directory and JWKS from a TOML file, a flag on the command
// line overrides the file, and an unknown key stops it before it serves,
// naming the key and its line.
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "http/client.h"
#include "service_process.h"
#include "test_issuer.h"
#include "testing/shell_run.h"

namespace aevatar::testing {
namespace {

class ChronoConfigFile : public ::testing::Test {
 protected:
  void SetUp() override { issuer_.WriteJwks(dir_.path() + "/jwks.json"); }

  // Writes `toml` to a file in the test's directory; returns its path.
  std::string WriteConfig(const std::string& toml) {
    const std::string path = dir_.path() + "/chrono-sandbox.toml";
    std::ofstream(path) << toml;
    return path;
  }

  // The service answers GET /healthz with 200.
  static void ExpectServes(const ServiceProcess& service) {
    http::ClientRequest request;
    request.method = "GET";
    request.url = service.base_url() + "/healthz";
    auto response = http::Fetch(request);
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->status, 200);
  }

  TempDir dir_;
  TestIssuer issuer_;
};

TEST_F(ChronoConfigFile, ServesWithListenAndStateDirFromTheFile) {
  const std::string state_dir = dir_.path() + "/state-from-file";
  const std::string config = WriteConfig(
      "# chrono-sandbox serve\nlisten = \"127.0.0.1:0\"\n"
      "state-dir = \"" +
      state_dir +
      "\"\n"
      "jwks-file = \"" +
      dir_.path() +
      "/jwks.json\"\n"
      "workers = 1\n");
  ServiceProcess service({BinaryPath("chrono-sandbox"), "serve", "--config", config},
                         dir_.path() + "/service.log");
  ASSERT_TRUE(service.ok()) << service.ReadLog();
  ExpectServes(service);
  // The store was created where the file said.
  EXPECT_TRUE(std::filesystem::is_directory(state_dir));
  EXPECT_FALSE(std::filesystem::is_empty(state_dir));
}

TEST_F(ChronoConfigFile, CommandLineOverridesTheFile) {
  // The file's listen address is unusable; the command line's wins.
  const std::string config = WriteConfig(
      "listen = \"not-an-address\"\n"
      "state-dir = \"" +
      dir_.path() +
      "/state\"\n"
      "jwks-file = \"" +
      dir_.path() + "/jwks.json\"\n");
  ServiceProcess service(
      {BinaryPath("chrono-sandbox"), "serve", "--config", config, "--listen", "127.0.0.1:0"},
      dir_.path() + "/service.log");
  ASSERT_TRUE(service.ok()) << service.ReadLog();
  ExpectServes(service);
}

TEST_F(ChronoConfigFile, UnknownKeyExitsNonZeroNamingItsLine) {
  const std::string config = WriteConfig("state-dir = \"" + dir_.path() +
                                         "/state\"\n"
                                         "jwks-file = \"" +
                                         dir_.path() +
                                         "/jwks.json\"\n"
                                         "listen_port = 8081\n");
  const ShellRun run =
      RunShell(dir_.path(), BinaryPath("chrono-sandbox") + " serve --config " + config);
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("line 3"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("unknown key \"listen_port\""), std::string::npos) << run.err;
  EXPECT_EQ(run.out.find("listening"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace aevatar::testing
