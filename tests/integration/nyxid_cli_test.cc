// The `nyxid` client commands against a real `nyxid serve`: login keeps the
// token in a 0600 file under $XDG_CONFIG_HOME/nyxid, and whoami, service list
// and agent-key create|list|revoke use it.
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <array>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "nyxid_fixture.h"

namespace aevatar::testing {
namespace {

constexpr char kBootstrap[] = R"yaml(
users:
  - {username: carol, password: "carol CLI password 1"}
catalog:
  - {id: cat_chrono_sandbox, slug: chrono-sandbox, base_url: "http://127.0.0.1:9",
     auto_connect: true,
     default_policy: {forward_access_token: true, inject_delegation_token: true,
                      delegation_token_scope: "proxy:* sandbox:execute"}}
)yaml";

struct CliRun {
  int exit_code = -1;
  std::string out;
};

// Runs the nyxid binary with `args` (a shell-quoted string), feeding `input`.
CliRun Nyxid(const std::string& config_home, const std::string& url, const std::string& args,
             const std::string& input = "") {
  const std::string input_file = config_home + "/stdin.txt";
  std::ofstream(input_file) << input;
  const std::string command = "env -u NYXID_API_KEY XDG_CONFIG_HOME='" + config_home +
                              "' NYXID_URL='" + url + "' '" + BinaryPath("nyxid") + "' " + args +
                              " < '" + input_file + "' 2>&1";
  CliRun run;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 4096> buffer;
  size_t n = 0;
  while ((n = ::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) run.out.append(buffer.data(), n);
  int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

TEST(NyxidCli, LoginWhoamiServiceListAndAgentKeys) {
  NyxidFixture nyxid(kBootstrap);
  ASSERT_TRUE(nyxid.ok()) << nyxid.service().ReadLog();
  TempDir home;

  CliRun denied = Nyxid(home.path(), nyxid.url(), "whoami");
  EXPECT_NE(denied.exit_code, 0);
  EXPECT_NE(denied.out.find("not logged in"), std::string::npos) << denied.out;

  CliRun bad = Nyxid(home.path(), nyxid.url(), "login -u carol --password-stdin", "wrong\n");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.out.find("LOGIN_FAILED"), std::string::npos) << bad.out;

  CliRun login =
      Nyxid(home.path(), nyxid.url(), "login -u carol --password-stdin", "carol CLI password 1\n");
  ASSERT_EQ(login.exit_code, 0) << login.out;
  const std::string session = home.path() + "/nyxid/session.json";
  struct stat st {};
  ASSERT_EQ(::stat(session.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat((home.path() + "/nyxid").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(login.out.find("eyJ"), std::string::npos);  // the token is not printed

  CliRun whoami = Nyxid(home.path(), nyxid.url(), "whoami");
  ASSERT_EQ(whoami.exit_code, 0) << whoami.out;
  EXPECT_NE(whoami.out.find("carol"), std::string::npos);
  EXPECT_NE(whoami.out.find("AccessToken"), std::string::npos);

  CliRun table = Nyxid(home.path(), nyxid.url(), "service list");
  ASSERT_EQ(table.exit_code, 0) << table.out;
  EXPECT_NE(table.out.find("chrono-sandbox"), std::string::npos);
  CliRun json = Nyxid(home.path(), nyxid.url(), "service list --output json");
  ASSERT_EQ(json.exit_code, 0) << json.out;
  nlohmann::json services = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_TRUE(services.is_array()) << json.out;
  ASSERT_EQ(services.size(), 1u);
  EXPECT_EQ(services[0]["slug"], "chrono-sandbox");
  EXPECT_EQ(services[0]["auto_connected"], true);
  EXPECT_EQ(services[0]["forward_access_token"], true);

  CliRun created = Nyxid(home.path(), nyxid.url(), "agent-key create --label cli --output json");
  ASSERT_EQ(created.exit_code, 0) << created.out;
  nlohmann::json key = nlohmann::json::parse(created.out, nullptr, false);
  ASSERT_TRUE(key.is_object()) << created.out;
  const std::string secret = key.value("key", "");
  EXPECT_EQ(secret.rfind("nyxid_ag_", 0), 0u);
  CliRun listed = Nyxid(home.path(), nyxid.url(), "agent-key list");
  ASSERT_EQ(listed.exit_code, 0) << listed.out;
  EXPECT_NE(listed.out.find(key.value("id", "")), std::string::npos);
  EXPECT_EQ(listed.out.find(secret), std::string::npos);
  CliRun revoked = Nyxid(home.path(), nyxid.url(), "agent-key revoke " + key.value("id", ""));
  EXPECT_EQ(revoked.exit_code, 0) << revoked.out;
  EXPECT_EQ(nyxid.Call("GET", "/api/v1/me", secret).status, 401);
  CliRun unknown = Nyxid(home.path(), nyxid.url(), "agent-key revoke ak_unknown");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.out.find("AGENT_KEY_NOT_FOUND"), std::string::npos) << unknown.out;

  EXPECT_EQ(nyxid.service().ReadLog().find("carol CLI password 1"), std::string::npos);
}

}  // namespace
}  // namespace aevatar::testing
