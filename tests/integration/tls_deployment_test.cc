// The three real binaries deployed on TLS as docs/deployment.md shows:
// HTTPS on every listener, each service verifying the others against a
// private CA, chrono-sandbox taking only callers with a client certificate
// from it (mutual TLS: NyxID's proxy), code_execute end to end through all of
// it; a plain listener on a reachable address refused unless
// --insecure-listen; a node connecting to NyxID over wss://.
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "aevatar_stack.h"
#include "gtest/gtest.h"
#include "http/client.h"
#include "nlohmann/json.hpp"
#include "testing/poll.h"
#include "testing/shell_run.h"

namespace aevatar::testing {
namespace {

using nlohmann::json;

absl::StatusOr<http::ClientResponse> Get(const std::string& url, http::ClientTls tls) {
  http::ClientRequest request;
  request.url = url;
  request.tls = std::move(tls);
  request.timeout = std::chrono::seconds(10);
  return http::Fetch(request);
}

http::ClientTls TrustingTheTestCa() {
  return http::ClientTls{.ca_file = TestPki("ca.pem"), .cert_file = {}, .key_file = {}};
}

TEST(TlsDeployment, CodeExecuteRunsEndToEndOverTlsWithMutualTlsToTheExecutor) {
  AevatarStack stack(AevatarStackOptions{.users_yaml = kAliceWithChronoRoute,
                                         .nyxid_args = {},
                                         .aevatar_args = {},
                                         .chrono_args = {},
                                         .aevatar_port = 0,
                                         .catalog_yaml = "",
                                         .tls = true});
  ASSERT_TRUE(stack.ok());
  ASSERT_TRUE(absl::StartsWith(stack.aevatar().base_url(), "https://"));
  // Caller -> aevatar (TLS) -> NyxID introspection and proxy (TLS) ->
  // chrono-sandbox (mutual TLS) -> sandbox, and back.
  const std::string token = stack.Login("alice");
  ASSERT_FALSE(token.empty());
  auto run = stack.Execute(token, {{"language", "python"}, {"source", "print('over tls')"}});
  ASSERT_EQ(run.status, 200) << run.body;
  EXPECT_EQ(json::parse(run.body, nullptr, false).value("stdout", ""), "over tls\n");

  // chrono-sandbox answers only NyxID: a certificate from the CA naming it.
  const std::string healthz = stack.chrono().base_url() + "/healthz";
  auto showing = [](const std::string& name) {
    http::ClientTls tls = TrustingTheTestCa();
    tls.cert_file = TestPki(name + ".pem");
    tls.key_file = TestPki(name + ".key");
    return tls;
  };
  EXPECT_FALSE(Get(healthz, TrustingTheTestCa()).ok()) << "no client certificate";
  EXPECT_FALSE(Get(healthz, showing("rogue-client")).ok()) << "a certificate from another CA";
  EXPECT_FALSE(Get(healthz, showing("client")).ok()) << "from the CA, naming another service";
  auto admitted = Get(healthz, showing("server"));
  ASSERT_TRUE(admitted.ok()) << admitted.status();
  EXPECT_EQ(admitted->status, 200);

  // No plain HTTP on any of the three ports, and no warning was logged.
  for (ServiceProcess* service : {&stack.aevatar(), &stack.chrono(), &stack.nyxid().service()}) {
    const std::string plain =
        "http://" + service->base_url().substr(std::string("https://").size());
    EXPECT_FALSE(Get(plain + "/healthz", {}).ok()) << plain;
    EXPECT_FALSE(absl::StrContains(service->ReadLog(), "insecure_listen"));
  }
}

// What each `serve` needs besides --listen to get as far as the listener.
struct ServeCase {
  std::string binary;
  std::string args;
};

TEST(TlsDeployment, APlainListenerOnAReachableAddressNeedsInsecureListen) {
  TempDir dir;
  std::ofstream(dir.path() + "/jwks.json") << R"({"keys":[]})";
  const std::vector<ServeCase> cases = {
      {"chrono-sandbox", "--jwks-file " + dir.path() + "/jwks.json"},
      {"nyxid", ""},
      {"aevatar", "--nyxid-url http://127.0.0.1:9 --vault-key-file " + dir.path() + "/vault.key"},
  };
  std::ofstream(dir.path() + "/vault.key") << std::string(32, 'k');
  for (const ServeCase& c : cases) {
    const std::string state = dir.path() + "/" + c.binary;
    const ShellRun refused = RunShell(
        dir.path(), absl::StrCat("timeout 60 ", BinaryPath(c.binary),
                                 " serve --listen 0.0.0.0:0 --state-dir ", state, " ", c.args));
    EXPECT_NE(refused.exit_code, 0) << c.binary;
    EXPECT_TRUE(absl::StrContains(refused.err, "--insecure-listen")) << c.binary << refused.err;
  }
  // With the flag the executor serves, and says so in its log.
  ServiceProcess insecure(
      {BinaryPath("chrono-sandbox"), "serve", "--listen", "0.0.0.0:0", "--state-dir",
       dir.path() + "/insecure", "--jwks-file", dir.path() + "/jwks.json", "--insecure-listen"},
      dir.path() + "/insecure.log");
  ASSERT_TRUE(insecure.ok());
  EXPECT_TRUE(insecure.WaitForLog("insecure_listen"));
  // Loopback stays plain without any flag (as `aevatar up` runs).
  ServiceProcess loopback(
      {BinaryPath("chrono-sandbox"), "serve", "--listen", "127.0.0.1:0", "--state-dir",
       dir.path() + "/loopback", "--jwks-file", dir.path() + "/jwks.json"},
      dir.path() + "/loopback.log");
  ASSERT_TRUE(loopback.ok());
}

TEST(TlsDeployment, ANodeRegistersAndStaysConnectedOverWss) {
  NyxidFixture nyxid(std::string(kAliceWithChronoRoute)
                         .substr(0, std::string(kAliceWithChronoRoute).find("user_services")),
                     {"--tls-cert", TestPki("server.pem"), "--tls-key", TestPki("server.key")});
  ASSERT_TRUE(nyxid.ok());
  TempDir dir;
  // As an operator would: the CLI trusts the private CA through OpenSSL's
  // SSL_CERT_FILE; the node keeps its own --ca-file in its profile.
  auto cli = [&](const std::string& args, const std::string& input = "") {
    std::string stdin_path;
    if (!input.empty()) {
      stdin_path = dir.path() + "/stdin.txt";
      std::ofstream(stdin_path, std::ios::trunc) << input;
    }
    return RunShell(
        dir.path(),
        absl::StrCat("SSL_CERT_FILE='", TestPki("ca.pem"), "' XDG_CONFIG_HOME='", dir.path(),
                     "/cfg' XDG_DATA_HOME='", dir.path(), "/data' NYXID_URL='", nyxid.url(),
                     "' timeout 60 ", BinaryPath("nyxid"), " ", args),
        stdin_path);
  };
  ASSERT_EQ(cli("login --username alice --password-stdin", "pw-alice\n").exit_code, 0);
  const ShellRun token = cli("node register-token --name laptop --terminal --output json");
  const std::string registration = json::parse(token.out, nullptr, false).value("token", "");
  ASSERT_FALSE(registration.empty()) << token.err;
  const std::string wss =
      "wss://" + nyxid.url().substr(std::string("https://").size()) + "/api/v1/nodes/ws";
  // ws:// carries the node secret in the clear: only to a NyxID on this host.
  const ShellRun plain = cli("node register --token " + registration +
                             " --url ws://10.0.0.1:1/api/v1/nodes/ws --profile work");
  EXPECT_NE(plain.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(plain.err, "wss://")) << plain.err;

  const ShellRun reg = cli("node register --token " + registration + " --url " + wss +
                           " --ca-file " + TestPki("ca.pem") + " --profile work --encrypted-file");
  ASSERT_EQ(reg.exit_code, 0) << reg.err;
  ASSERT_EQ(cli("node daemon start --profile work").exit_code, 0);
  const bool online = PollUntil([&] {
    const json nodes = json::parse(cli("node list --output json").out, nullptr, false);
    return nodes.is_object() && nodes["nodes"].size() == 1 &&
           nodes["nodes"][0].value("status", "") == "online";
  });
  cli("node daemon stop --profile work");
  EXPECT_TRUE(online) << "the node never came online over wss";
}

}  // namespace
}  // namespace aevatar::testing
