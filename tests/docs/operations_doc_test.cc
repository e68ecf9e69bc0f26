// docs/operations.md has a runbook entry for every typed error code in the
// source, so the page stays complete as codes are added.
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace {

namespace fs = std::filesystem;

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Upper-snake string literals in src/ that are not error codes: environment
// variable names and setrlimit resource names. A new environment variable
// goes here; a new error code goes into docs/operations.md.
bool IsNotACode(const std::string& literal) {
  static const std::set<std::string> kNames = {
      "AEVATAR_AGENT_KEY",
      "AEVATAR_CODEX_CONFIG",
      "AEVATAR_TOKEN",
      "AEVATAR_URL",
      "AEVATAR_VAULT_KEY",
      "AEVATAR_VAULT_PREVIOUS_KEY",
      "CHRONO_SANDBOX_TOKEN",
      "CODEX_HOME",
      "NO_COLOR",
      "NYXID_API_KEY",
      "NYXID_BASE_URL",
      "NYXID_LLM_TOKEN",
      "NYXID_PROFILE",
      "NYXID_URL",
      "XDG_CONFIG_HOME",
      "XDG_DATA_HOME",
  };
  return kNames.count(literal) > 0 || literal.rfind("RLIMIT_", 0) == 0;
}

// Every code the sources can return: upper-snake literals ("USER_SERVICE_NOT_FOUND"),
// lower-case code constants (kManaged…, kOutcome…, k…Code, kTargetNotConfigured)
// and lower-case codes given to an …Error("…") helper (SshError).
std::set<std::string> CodesInSources() {
  static const std::regex kUpper(R"re("([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)")re");
  static const std::regex kLowerConstant(
      R"re(constexpr char k(?:Managed\w*|Outcome\w*|\w*Code|TargetNotConfigured)\[\] = "([a-z]+(?:_[a-z]+)+)")re");
  // ErrnoError("memfd_create", …) names a syscall, not a code.
  static const std::regex kLowerHelper(R"re((?!Errno)[A-Z]\w*Error\("([a-z]+(?:_[a-z]+)+)")re");
  std::set<std::string> codes;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(AEVATAR_SOURCE_DIR) / "src")) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".cc" && ext != ".h")) continue;
    const std::string text = ReadAll(entry.path());
    for (const std::regex* pattern : {&kUpper, &kLowerConstant, &kLowerHelper}) {
      for (std::sregex_iterator it(text.begin(), text.end(), *pattern), end; it != end; ++it) {
        const std::string code = (*it)[1].str();
        if (!IsNotACode(code)) codes.insert(code);
      }
    }
  }
  return codes;
}

TEST(OperationsDoc, EveryErrorCodeInTheSourcesHasARunbookEntry) {
  const std::string doc = ReadAll(fs::path(AEVATAR_SOURCE_DIR) / "docs" / "operations.md");
  ASSERT_FALSE(doc.empty()) << "docs/operations.md is missing";
  const std::set<std::string> codes = CodesInSources();
  // The scan finds the codes it should (a broken regex would pass vacuously).
  ASSERT_GT(codes.size(), 150u);
  for (const char* known : {"USER_SERVICE_NOT_FOUND", "QUEUE_FULL", "managed_proxy_timeout",
                            "code_execution_step_timeout", "ssh_route_denied"}) {
    EXPECT_TRUE(codes.count(known)) << known << " not found by the scan";
  }
  for (const std::string& code : codes) {
    // A runbook row starts "| `CODE` |".
    EXPECT_NE(doc.find("| `" + code + "` |"), std::string::npos)
        << code << " has no runbook row in docs/operations.md";
  }
}

TEST(OperationsDoc, DocumentsTheMetricsEachServiceServes) {
  const std::string doc = ReadAll(fs::path(AEVATAR_SOURCE_DIR) / "docs" / "operations.md");
  for (const char* series : {"chrono_runs_total", "chrono_queue_depth", "chrono_codex_runs_total",
                             "nyxid_logins_total", "nyxid_tokens_minted_total",
                             "nyxid_proxy_exchanges_total", "nyxid_proxy_upstream_duration_seconds",
                             "aevatar_tool_calls_total", "aevatar_workflow_runs_total",
                             "aevatar_workflow_run_duration_seconds", "aevatar_codex_runs_total",
                             "aevatar_approvals_pending", "PREFIX_http_request_duration_seconds"}) {
    EXPECT_NE(doc.find(std::string("`") + series + "`"), std::string::npos) << series;
  }
}

}  // namespace
