// `nyxid … --json` against a real `nyxid serve`: each command prints exactly
// one JSON document on stdout, never a credential, and a failure is a problem
// object with `code` and `diagnostic_id` (the broker's id when the broker
// refused, null when the CLI failed before asking it).
#include <fstream>

#include "gtest/gtest.h"
#include "nyxid_fixture.h"
#include "testing/shell_run.h"

namespace aevatar::testing {
namespace {

constexpr char kJsonBootstrap[] = R"yaml(
users:
  - {username: dana, password: "dana JSON password 1"}
  - {username: root, password: "root JSON password 1", platform_admin: true}
)yaml";

struct JsonRun {
  ShellRun run;
  nlohmann::json document;  // stdout parsed as one JSON document (discarded if not)
};

// `nyxid ARGS` with $XDG_CONFIG_HOME `home`, `input` on stdin.
JsonRun NyxidJson(const TempDir& home, const std::string& url, const std::string& args,
                  const std::string& input = "") {
  const std::string stdin_path = home.path() + "/stdin.txt";
  std::ofstream(stdin_path, std::ios::trunc) << input;
  JsonRun result;
  result.run = RunShell(home.path(),
                        "env -u NYXID_API_KEY XDG_CONFIG_HOME='" + home.path() + "' NYXID_URL='" +
                            url + "' '" + BinaryPath("nyxid") + "' " + args,
                        stdin_path);
  result.document = nlohmann::json::parse(result.run.out, nullptr, /*allow_exceptions=*/false);
  return result;
}

// A problem object: a non-empty string code, and a diagnostic id that is a
// non-empty string when `from_broker`, else null.
void ExpectProblemObject(const JsonRun& failed, bool from_broker) {
  EXPECT_EQ(failed.run.exit_code, 1) << failed.run.out << failed.run.err;
  ASSERT_TRUE(failed.document.is_object()) << "stdout: " << failed.run.out;
  ASSERT_TRUE(failed.document.contains("code")) << failed.run.out;
  ASSERT_TRUE(failed.document["code"].is_string()) << failed.run.out;
  EXPECT_FALSE(failed.document["code"].get<std::string>().empty());
  ASSERT_TRUE(failed.document.contains("diagnostic_id")) << failed.run.out;
  if (from_broker) {
    ASSERT_TRUE(failed.document["diagnostic_id"].is_string()) << failed.run.out;
    EXPECT_FALSE(failed.document["diagnostic_id"].get<std::string>().empty());
  } else {
    EXPECT_TRUE(failed.document["diagnostic_id"].is_null()) << failed.run.out;
  }
}

TEST(NyxidCliJson, SessionCommandsPrintOneDocumentAndNoToken) {
  NyxidFixture nyxid(kJsonBootstrap);
  ASSERT_TRUE(nyxid.ok()) << nyxid.service().ReadLog();
  TempDir home;

  const JsonRun refused =
      NyxidJson(home, nyxid.url(), "login -u dana --password-stdin --json", "wrong\n");
  ExpectProblemObject(refused, /*from_broker=*/true);
  EXPECT_EQ(refused.document.value("code", ""), "LOGIN_FAILED");

  const JsonRun login = NyxidJson(home, nyxid.url(), "login -u dana --password-stdin --json",
                                  "dana JSON password 1\n");
  ASSERT_EQ(login.run.exit_code, 0) << login.run.out << login.run.err;
  ASSERT_TRUE(login.document.is_object()) << login.run.out;
  EXPECT_EQ(login.document.value("username", ""), "dana");
  EXPECT_EQ(login.document.value("url", ""), nyxid.url());
  EXPECT_FALSE(login.document.contains("access_token"));
  EXPECT_EQ(login.run.out.find("eyJ"), std::string::npos);  // no JWT anywhere

  const JsonRun changed =
      NyxidJson(home, nyxid.url(), "passwd --json", "dana JSON password 1\ndana JSON password 2\n");
  ASSERT_EQ(changed.run.exit_code, 0) << changed.run.out << changed.run.err;
  EXPECT_EQ(changed.document.value("password_changed", false), true) << changed.run.out;
  // passwd forgets the login: the next command fails here, before asking.
  ExpectProblemObject(NyxidJson(home, nyxid.url(), "whoami --json"), /*from_broker=*/false);

  ASSERT_EQ(NyxidJson(home, nyxid.url(), "login -u dana --password-stdin --json",
                      "dana JSON password 2\n")
                .run.exit_code,
            0);
  const JsonRun logout = NyxidJson(home, nyxid.url(), "logout --json");
  ASSERT_EQ(logout.run.exit_code, 0) << logout.run.out << logout.run.err;
  EXPECT_EQ(logout.document.value("logged_out", false), true) << logout.run.out;
}

TEST(NyxidCliJson, KeysAgentKeysAndNodesAnswerWithDocumentsOrProblems) {
  NyxidFixture nyxid(kJsonBootstrap);
  ASSERT_TRUE(nyxid.ok()) << nyxid.service().ReadLog();
  TempDir dana;
  TempDir root;
  ASSERT_EQ(NyxidJson(dana, nyxid.url(), "login -u dana --password-stdin", "dana JSON password 1\n")
                .run.exit_code,
            0);
  ASSERT_EQ(NyxidJson(root, nyxid.url(), "login -u root --password-stdin", "root JSON password 1\n")
                .run.exit_code,
            0);

  // Rotation is for platform admins: dana gets the broker's problem.
  const JsonRun not_admin = NyxidJson(dana, nyxid.url(), "keys rotate --json");
  ExpectProblemObject(not_admin, /*from_broker=*/true);
  const JsonRun rotated = NyxidJson(root, nyxid.url(), "keys rotate --json");
  ASSERT_EQ(rotated.run.exit_code, 0) << rotated.run.out << rotated.run.err;
  ASSERT_TRUE(rotated.document.is_object()) << rotated.run.out;
  EXPECT_FALSE(rotated.document.value("kid", "").empty());
  EXPECT_NE(rotated.document.value("kid", ""), rotated.document.value("previous_kid", ""));

  const JsonRun created = NyxidJson(dana, nyxid.url(), "agent-key create --label json --json");
  ASSERT_EQ(created.run.exit_code, 0) << created.run.out;
  const std::string id = created.document.value("id", "");
  ASSERT_FALSE(id.empty()) << created.run.out;
  const JsonRun revoked = NyxidJson(dana, nyxid.url(), "agent-key revoke " + id + " --json");
  ASSERT_EQ(revoked.run.exit_code, 0) << revoked.run.out << revoked.run.err;
  EXPECT_EQ(revoked.document, (nlohmann::json{{"id", id}, {"revoked", true}}));
  const JsonRun unknown = NyxidJson(dana, nyxid.url(), "agent-key revoke ak_unknown --json");
  ExpectProblemObject(unknown, /*from_broker=*/true);
  EXPECT_EQ(unknown.document.value("code", ""), "AGENT_KEY_NOT_FOUND");
  EXPECT_EQ(unknown.document.value("status", 0), 404);

  ExpectProblemObject(NyxidJson(dana, nyxid.url(), "node delete node_unknown --json"),
                      /*from_broker=*/true);
  // The broker refuses a made-up registration token.
  const std::string ws_url = "ws" + nyxid.url().substr(4) + "/api/v1/nodes/ws";
  ExpectProblemObject(NyxidJson(dana, nyxid.url(),
                                "node register --token nyxid_nreg_unknown --url '" + ws_url +
                                    "' --profile jsonnode --json"),
                      /*from_broker=*/true);
  // No such profile: the CLI fails before any exchange.
  for (const std::string args : {"node ssh-credentials --profile absent list --json",
                                 "node daemon stop --profile absent "
                                 "--json"}) {
    const JsonRun local = NyxidJson(dana, nyxid.url(), args);
    ExpectProblemObject(local, /*from_broker=*/false);
    EXPECT_TRUE(local.run.err.find("nyxid: ") != std::string::npos) << local.run.err;
  }
}

}  // namespace
}  // namespace aevatar::testing
