#include "security_fixture.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "absl/status/statusor.h"
#include "testing/poll.h"
#include "testing/runtime_roots.h"

namespace aevatar::security_test {
namespace {

namespace fs = std::filesystem;

// The runtime roots of the shared engine, removed when the binary exits.
struct RuntimeRoots {
  RuntimeRoots()
      : python("sec-py", Language::kPython),
        node("sec-js", Language::kJavaScript),
        bash("sec-sh", Language::kBash) {
    // A setuid-root program in a runtime: nosuid and no_new_privs must make
    // it run as the sandbox user.
    const fs::path suid = fs::path(bash.root()) / "bin" / "id-suid";
    fs::copy_file("/usr/bin/id", suid);
    fs::permissions(suid, fs::perms::set_uid | fs::perms::owner_all | fs::perms::group_read |
                              fs::perms::group_exec | fs::perms::others_read |
                              fs::perms::others_exec);
  }
  testing::TestRuntimeRoot python;
  testing::TestRuntimeRoot node;
  testing::TestRuntimeRoot bash;
};

RuntimeRoots& Roots() {
  static RuntimeRoots roots;
  return roots;
}

// Warm Python sandboxes (sandbox::EngineOptions::warm_python) kept for
// Python runs with QuickLimits: tests/security/CMakeLists.txt runs the whole
// suite a second time with them on.
size_t WarmPythonSandboxes() {
  const char* count = std::getenv("AEVATAR_SECURITY_WARM_PYTHON");
  return count == nullptr ? 0 : static_cast<size_t>(std::atoi(count));
}

sandbox::EngineOptions SharedEngineOptions() {
  sandbox::EngineOptions options;
  options.runtimes = {Roots().python.env(), Roots().node.env(), Roots().bash.env()};
  if (testing::PythonDataRootProblem().empty()) {
    options.runtimes.push_back({"python-data", Language::kPython, testing::kPythonDataRoot});
  }
  options.warm_python = WarmPythonSandboxes();
  options.warm_python_limits = SecurityTest::QuickLimits();
  return options;
}

// One engine for the whole binary: creating it compiles the seccomp program
// and prepares the cgroup parents once.
absl::StatusOr<sandbox::Engine*> SharedEngine() {
  static const absl::StatusOr<std::unique_ptr<sandbox::Engine>>* engine =
      new absl::StatusOr<std::unique_ptr<sandbox::Engine>>(
          sandbox::Engine::Create(SharedEngineOptions()));
  if (!engine->ok()) return engine->status();
  return engine->value().get();
}

// With warm sandboxes on, the host is compared only while the pool is full
// (each warm sandbox then holds all its processes, cgroup and namespaces):
// a run's leftovers cannot hide behind a sandbox not yet replaced.
void WaitForAFullWarmPool(const sandbox::Engine& engine) {
  const size_t target = engine.options().warm_python;
  if (target == 0) return;
  EXPECT_TRUE(testing::PollUntil([&] { return engine.warm_python_stats().ready >= target; }))
      << "the warm pool did not refill";
}

std::string Head(const std::string& text, size_t max) {
  return text.size() <= max
             ? text
             : text.substr(0, max) + "...[" + std::to_string(text.size()) + " bytes]";
}

}  // namespace

std::string Describe(const RunResult& result) {
  std::ostringstream out;
  out << "verdict=" << sandbox::VerdictName(result.verdict) << " exit=" << result.exit_code
      << " signal=" << result.signal << " wall_ms=" << result.wall_ms << "\n--- stdout ---\n"
      << Head(result.stdout_data, 2000) << "\n--- stderr ---\n"
      << Head(result.stderr_data, 2000);
  return out.str();
}

std::string UniqueMarker(std::string_view what) {
  static std::atomic<int> counter{0};
  return "aevatar-sec-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" +
         std::string(what);
}

std::string RuntimeRoot(const std::string& name) {
  auto engine = SharedEngine();
  if (!engine.ok()) return "";
  for (const sandbox::RuntimeEnv& env : (*engine)->options().runtimes) {
    if (env.name == name) return env.root;
  }
  return "";
}

std::string ReadHostFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void SecurityTest::SetUp() {
  ASSERT_EQ(::geteuid(), 0u) << "the native backend and the host snapshot need root";
  auto engine = SharedEngine();
  ASSERT_TRUE(engine.ok()) << engine.status();
  WaitForAFullWarmPool(**engine);
  before_test_ = TakeHostSnapshot();
}

void SecurityTest::TearDown() {
  if (auto engine = SharedEngine(); engine.ok()) WaitForAFullWarmPool(**engine);
  EXPECT_EQ(WaitUntilNothingLeft(before_test_), "") << "the test left something on the host";
}

Limits SecurityTest::QuickLimits() {
  Limits limits;
  limits.wall_timeout_secs = 10;
  return limits;
}

RunResult SecurityTest::Run(const Program& program, const Limits& limits,
                            const std::string& stdin_data) {
  sandbox::RunSpec spec;
  spec.language = program.language;
  spec.source = program.source;
  spec.stdin_data = stdin_data;
  spec.runtime = program.runtime;
  spec.limits = limits;
  return RunWithSpec(std::move(spec));
}

RunResult SecurityTest::RunWithSpec(sandbox::RunSpec spec) {
  auto engine = SharedEngine();
  EXPECT_TRUE(engine.ok()) << engine.status();
  if (!engine.ok()) return {};
  spec.backend = sandbox::BackendKind::kNative;
  WaitForAFullWarmPool(**engine);
  const HostSnapshot before_run = TakeHostSnapshot();
  const size_t warm_served = (*engine)->warm_python_stats().served;
  auto result = (*engine)->Run(spec);
  EXPECT_TRUE(result.ok()) << sandbox::LanguageName(spec.language) << ": " << result.status();
  // The warm pass runs every program the warm sandboxes are kept for warm,
  // and no other.
  EXPECT_EQ((*engine)->warm_python_stats().served - warm_served,
            (*engine)->FitsWarmPython(spec) ? 1u : 0u)
      << "a run took a warm sandbox it does not fit, or started cold while one was ready";
  WaitForAFullWarmPool(**engine);
  EXPECT_EQ(WaitUntilNothingLeft(before_run), "")
      << sandbox::LanguageName(spec.language) << " run left something on the host";
  return result.ok() ? *std::move(result) : RunResult{};
}

}  // namespace aevatar::security_test
