// The fixture every security test uses: one shared native-backend Engine, a
// helper that runs a hostile program in-process, and a host snapshot taken
// before each test and each run and compared after them (nothing of a run
// may be left on the host).
#ifndef AEVATAR_TESTS_SECURITY_SECURITY_FIXTURE_H_
#define AEVATAR_TESTS_SECURITY_SECURITY_FIXTURE_H_

#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "host_snapshot.h"
#include "sandbox/engine.h"

namespace aevatar::security_test {

using sandbox::Language;
using sandbox::Limits;
using sandbox::RunResult;
using sandbox::Verdict;

// One hostile program in one language, in the language's default runtime
// or the named runtime environment (kRuntimeNames).
struct Program {
  Language language;
  std::string source;
  std::string runtime = "";
};

// The runtime environments the shared engine declares, each a root made for
// this binary (testing/runtime_roots.h): "sec-py" (python), "sec-js"
// (javascript), "sec-sh" (bash, whose bin/ also holds a setuid-root copy of
// id, `id-suid`); and "python-data" (numpy, pandas) when scripts/setup
// prepared it.
inline constexpr const char* kRuntimeNames[] = {"sec-py", "sec-js", "sec-sh"};

// The host root of the shared engine's runtime `name` ("" if none).
std::string RuntimeRoot(const std::string& name);

// Returns a one-paragraph account of `result` for failure messages.
std::string Describe(const RunResult& result);

// Returns a name unique to this process and call, e.g. "aevatar-sec-1234-7-shadow".
std::string UniqueMarker(std::string_view what);

// Returns the contents of a host file, or "" when it cannot be read.
std::string ReadHostFile(const std::string& path);

class SecurityTest : public ::testing::Test {
 public:
  // Limits for a program expected to finish by itself: a 10 s wall deadline
  // (only reached if the sandbox fails to end the run), the rest defaults.
  // Warm Python sandboxes, when on, are kept for these.
  static Limits QuickLimits();

 protected:
  void SetUp() override;
  void TearDown() override;

  // Runs `program` on the native backend and returns its result; a sandbox
  // error fails the test and returns an empty result. After the run, asserts
  // (with a short wait for the kernel to reap) that nothing of it is left.
  RunResult Run(const Program& program, const Limits& limits = QuickLimits(),
                const std::string& stdin_data = "");

  // As Run, for a spec the test fills in itself (env, server_env, ...). The
  // backend is always native. Thread-safe: tests may run specs concurrently.
  RunResult RunWithSpec(sandbox::RunSpec spec);

 private:
  HostSnapshot before_test_;
};

}  // namespace aevatar::security_test

#endif  // AEVATAR_TESTS_SECURITY_SECURITY_FIXTURE_H_
