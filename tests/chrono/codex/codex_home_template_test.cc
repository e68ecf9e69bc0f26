// The Codex home template made by the real Codex CLI on the real engine,
// under each backend: what the tar holds, and that a managed run's script
// unpacks it into the run's home as the sandbox user.
#include "chrono/codex/codex_home_template.h"

#include <unistd.h>

#include <cstdio>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "chrono/codex/codex_runner.h"
#include "gtest/gtest.h"
#include "sandbox/engine.h"

namespace aevatar::chrono {
namespace {

// `tar -t` of `tar_bytes`, run on the host by the test (never by chrono).
std::string ListTar(const std::string& tar_bytes) {
  char path[] = "/var/tmp/codex-home-template-XXXXXX";
  const int fd = ::mkstemp(path);
  if (fd < 0) return "";
  const bool written =
      ::write(fd, tar_bytes.data(), tar_bytes.size()) == static_cast<ssize_t>(tar_bytes.size());
  ::close(fd);
  std::string listing;
  if (written) {
    FILE* tar = ::popen(("tar -tf " + std::string(path)).c_str(), "r");
    char buffer[4096];
    for (size_t n; tar != nullptr && (n = ::fread(buffer, 1, sizeof buffer, tar)) > 0;) {
      listing.append(buffer, n);
    }
    if (tar != nullptr) ::pclose(tar);
  }
  std::remove(path);
  return listing;
}

class CodexHomeTemplateTest : public ::testing::TestWithParam<sandbox::BackendKind> {
 protected:
  void SetUp() override {
    if (::access(kDefaultCodexPath, X_OK) != 0) GTEST_SKIP() << "the Codex CLI is not installed";
    if (GetParam() == sandbox::BackendKind::kGvisor && ::access("/usr/bin/runsc", X_OK) != 0) {
      GTEST_SKIP() << "runsc is not installed";
    }
    auto engine = sandbox::Engine::Create();
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  std::unique_ptr<sandbox::Engine> engine_;
};

TEST_P(CodexHomeTemplateTest, HoldsCodexStateButNoConfigOrInstallationId) {
  auto run = engine_->Run(BuildCodexHomeTemplateRunSpec(kDefaultCodexPath, "m", GetParam()), {});
  ASSERT_TRUE(run.ok()) << run.status();
  auto made = CodexHomeTemplateFrom(*run);
  ASSERT_TRUE(made.ok()) << made.status() << "\n" << run->stderr_data;
  const std::string listing = ListTar(**made);
  for (const char* entry : {"./state_5.sqlite\n", "./logs_2.sqlite\n",
                            "./skills/.system/.codex-system-skills.marker\n"}) {
    EXPECT_TRUE(absl::StrContains(listing, entry)) << entry << " not in:\n" << listing;
  }
  for (const char* absent : {"./config.toml\n", "./installation_id\n"}) {
    EXPECT_FALSE(absl::StrContains(listing, absent)) << absent;
  }
  for (const absl::string_view line : absl::StrSplit(listing, '\n', absl::SkipEmpty())) {
    EXPECT_TRUE(absl::StartsWith(line, "./")) << "an entry outside the home: " << line;
  }

  // A managed run's preparation (its script without the final exec) unpacks
  // it into the home as the sandbox user: the databases are there, writable.
  // (Bash builtins only: coreutils' statx fails under Debian's gVisor.)
  CodexRunInput input;
  input.codex_host_path = kDefaultCodexPath;
  input.model = "m";
  input.relay_port = 9;
  input.backend = GetParam();
  input.home_template = *made;
  sandbox::RunSpec spec = BuildCodexRunSpec(input);
  const size_t exec_line = spec.source.rfind("exec codex ");
  ASSERT_NE(exec_line, std::string::npos);
  spec.source = spec.source.substr(0, exec_line) +
                "cd .aevatar/codex-home\n"
                "for f in config.toml state_5.sqlite; do [ -f $f ] && echo $f; done\n"
                "[ -w state_5.sqlite ] && echo WRITABLE\n";
  auto prepared = engine_->Run(spec, {});
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_EQ(prepared->stdout_data, "config.toml\nstate_5.sqlite\nWRITABLE\n")
      << prepared->stderr_data;
}

TEST(CodexHomeTemplateShape, OnlyAWholeTarFromACleanExitIsATemplate) {
  sandbox::RunResult result;
  result.stdout_data = std::string(1024, '\0');
  result.stdout_data.replace(257, 5, "ustar");
  EXPECT_TRUE(CodexHomeTemplateFrom(result).ok());

  sandbox::RunResult failed = result;
  failed.exit_code = 2;
  failed.verdict = sandbox::Verdict::kNonzeroExit;
  EXPECT_FALSE(CodexHomeTemplateFrom(failed).ok());
  sandbox::RunResult truncated = result;
  truncated.stdout_truncated = true;
  EXPECT_FALSE(CodexHomeTemplateFrom(truncated).ok());
  sandbox::RunResult ragged = result;
  ragged.stdout_data.pop_back();
  EXPECT_FALSE(CodexHomeTemplateFrom(ragged).ok());
  sandbox::RunResult not_tar = result;
  not_tar.stdout_data.replace(257, 5, "xxxxx");
  EXPECT_FALSE(CodexHomeTemplateFrom(not_tar).ok());
  EXPECT_FALSE(CodexHomeTemplateFrom(sandbox::RunResult{}).ok());
}

INSTANTIATE_TEST_SUITE_P(Backends, CodexHomeTemplateTest,
                         ::testing::Values(sandbox::BackendKind::kNative,
                                           sandbox::BackendKind::kGvisor),
                         [](const auto& info) {
                           return std::string(sandbox::BackendName(info.param));
                         });

}  // namespace
}  // namespace aevatar::chrono
