// Runtime environment roots for tests (src/sandbox/runtime_env.h).
#ifndef AEVATAR_TESTS_TESTING_RUNTIME_ROOTS_H_
#define AEVATAR_TESTS_TESTING_RUNTIME_ROOTS_H_

#include <string>

#include "sandbox/runtime_env.h"

namespace aevatar::testing {

// The Python runtime with Debian's numpy and pandas that scripts/setup
// prepares (scripts/python-runtime).
inline constexpr char kPythonDataRoot[] = "/var/lib/aevatar/runtimes/python-data";

// Returns "" when kPythonDataRoot is a usable python runtime root, else why
// not (with the command that prepares it).
std::string PythonDataRootProblem();

// A small runtime root made for one test, outside /tmp (the sandbox's root
// mount point hides /tmp): beside the test binary, removed when this goes.
// It holds one probe library for `language`, which prints `kProbeText`:
//   python: a virtual environment whose site-packages has aevatar_probe.py
//           (`import aevatar_probe; aevatar_probe.hello()`);
//   javascript/typescript: node_modules/aevatar-probe
//           (`require("aevatar-probe").hello()`);
//   bash: bin/aevatar-probe (a command on PATH).
class TestRuntimeRoot {
 public:
  static constexpr char kProbeText[] = "probe library loaded";

  TestRuntimeRoot(const std::string& name, sandbox::Language language);
  ~TestRuntimeRoot();
  TestRuntimeRoot(const TestRuntimeRoot&) = delete;
  TestRuntimeRoot& operator=(const TestRuntimeRoot&) = delete;

  const sandbox::RuntimeEnv& env() const { return env_; }
  const std::string& root() const { return env_.root; }
  // "NAME=LANGUAGE:ROOT", the --runtime flag's value.
  std::string Flag() const;

 private:
  sandbox::RuntimeEnv env_;
};

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_TESTING_RUNTIME_ROOTS_H_
