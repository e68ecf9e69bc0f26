#include "cli/server_replies.h"

#include <string>

#include "gtest/gtest.h"

namespace aevatar::cli {
namespace {

using nlohmann::json;

TEST(DescribeProblem, PrintsCodeDetailRemediationAndDiagnosticId) {
  EXPECT_EQ(DescribeProblem(503, R"({"code":"CODE_EXECUTION_ROUTE_MISSING","detail":"no route",
                                     "remediation":"ask an admin","diagnostic_id":"diag_1"})"),
            "error: CODE_EXECUTION_ROUTE_MISSING: no route\n"
            "remediation: ask an admin\n"
            "diagnostic id: diag_1\n");
  EXPECT_EQ(DescribeProblem(502, "<html>bad gateway</html>"), "error: HTTP 502\n");
}

TEST(DescribeProblem, MembersOfTheWrongTypeNeverAbortTheCli) {
  // value("code", "HTTP_…") on {"code": 5} threw nlohmann::json::type_error.
  EXPECT_EQ(DescribeProblem(500, R"({"code":5,"detail":{},"remediation":[],"diagnostic_id":7})"),
            "error: HTTP_500: \ndiagnostic id: -\n");
  EXPECT_EQ(ProblemSummary(403, R"({"code":["X"],"detail":false})"), "HTTP_ERROR:  (HTTP 403)");
  EXPECT_EQ(ProblemSummary(401, R"({"code":"TOKEN_EXPIRED","detail":"expired",
                                    "diagnostic_id":"diag_2"})"),
            "TOKEN_EXPIRED: expired (HTTP 401, diagnostic_id diag_2)");
}

TEST(ProblemObject, KeepsOnlyTheSanitisedFieldsOfTheReply) {
  EXPECT_EQ(ProblemObject(404, R"({"code":"AGENT_KEY_NOT_FOUND","detail":"no such key",
                                   "diagnostic_id":"diag_3","extra":"dropped"})"),
            (json{{"code", "AGENT_KEY_NOT_FOUND"},
                  {"detail", "no such key"},
                  {"status", 404},
                  {"diagnostic_id", "diag_3"}}));
  // Not problem+json, or members of the wrong type: still a problem object.
  EXPECT_EQ(
      ProblemObject(502, "<html>bad gateway</html>"),
      (json{{"code", "HTTP_ERROR"}, {"detail", ""}, {"status", 502}, {"diagnostic_id", nullptr}}));
  const json odd = ProblemObject(500, R"({"code":"a b","detail":7,"diagnostic_id":"x\ny"})");
  EXPECT_EQ(odd["code"], "HTTP_ERROR");
  EXPECT_TRUE(odd["diagnostic_id"].is_null());
  EXPECT_EQ(LocalProblemObject("FAILED_PRECONDITION", "not logged in"),
            (json{{"code", "FAILED_PRECONDITION"},
                  {"detail", "not logged in"},
                  {"diagnostic_id", nullptr}}));
}

TEST(ExecExitCode, FollowsTheResultAndDefaultsToFailure) {
  EXPECT_EQ(ExecExitCode(json{{"exit_code", 3}}), 3);
  EXPECT_EQ(ExecExitCode(json{{"exit_code", 0}, {"timed_out", true}}), 124);
  // Each of these used to throw (or, for 1e3, exit with a wrapped code).
  EXPECT_EQ(ExecExitCode(json{{"exit_code", "0"}}), 1);
  EXPECT_EQ(ExecExitCode(json{{"exit_code", 0}, {"timed_out", "no"}}), 0);
  EXPECT_EQ(ExecExitCode(json{{"exit_code", 1000}}), 1);
  EXPECT_EQ(ExecExitCode(json::array()), 1);
  EXPECT_EQ(ExecExitCode(json()), 1);
}

TEST(ExecFailureSummary, AFailedRunNamesItsDiagnosticId) {
  EXPECT_EQ(ExecFailureSummary(json{{"success", false},
                                    {"exit_code", 2},
                                    {"verdict", "nonzero_exit"},
                                    {"diagnostic_id", "diag_9"}}),
            "aevatar exec: nonzero_exit, exit code 2, diagnostic id diag_9\n");
  EXPECT_EQ(ExecFailureSummary(json{{"success", false},
                                    {"exit_code", -1},
                                    {"timed_out", true},
                                    {"verdict", "time_limit"},
                                    {"diagnostic_id", "diag_t"}}),
            "aevatar exec: time_limit, timed out, diagnostic id diag_t\n");
  // Members of another type are left out, never thrown on.
  EXPECT_EQ(ExecFailureSummary(json{{"exit_code", 1}, {"diagnostic_id", 7}, {"verdict", true}}),
            "aevatar exec: failed, exit code 1\n");
}

TEST(ExecFailureSummary, ASuccessfulRunSaysNothing) {
  EXPECT_EQ(
      ExecFailureSummary(json{{"success", true}, {"exit_code", 0}, {"diagnostic_id", "diag_ok"}}),
      "");
  EXPECT_EQ(ExecFailureSummary(json{{"exit_code", 0}}), "");
}

json Credentials() {
  return {{"operator", {{"username", "operator"}, {"password", "p1"}}},
          {"demo", {{"username", "demo"}, {"password", "p2"}}},
          {"introspection_secret", "s"},
          {"nyxid_url", "http://127.0.0.1:8080"},
          {"chrono_url", "http://127.0.0.1:8081"},
          {"aevatar_url", "http://127.0.0.1:8082"}};
}

TEST(ParseStackCredentials, ReadsTheFile) {
  auto credentials = ParseStackCredentials(Credentials());
  ASSERT_TRUE(credentials.ok()) << credentials.status();
  EXPECT_EQ(credentials->operator_password, "p1");
  EXPECT_EQ(credentials->chrono_url, "http://127.0.0.1:8081");
}

TEST(ParseStackCredentials, ADamagedFileIsDataLossNamingTheField) {
  // A missing or mistyped member made `aevatar up` abort on a type_error
  // (or an out_of_range from a URL shorter than "http://").
  const std::pair<std::string, json> cases[] = {
      {"operator.password", json::object({{"operator", "p1"}})},
      {"demo.password", json::object({{"demo", {{"password", 2}}}})},
      {"nyxid_url", json::object({{"nyxid_url", nullptr}})},
      {"chrono_url", json::object({{"chrono_url", "ftp://x"}})},
      {"aevatar_url", json::object({{"aevatar_url", "http"}})},
      {"introspection_secret", json::object({{"introspection_secret", ""}})},
  };
  for (const auto& [field, patch] : cases) {
    json document = Credentials();
    document.merge_patch(patch);
    auto credentials = ParseStackCredentials(document);
    ASSERT_TRUE(absl::IsDataLoss(credentials.status())) << field;
    EXPECT_NE(std::string(credentials.status().message()).find(field), std::string::npos)
        << credentials.status();
  }
  EXPECT_TRUE(absl::IsDataLoss(ParseStackCredentials(json::array()).status()));
}

}  // namespace
}  // namespace aevatar::cli
