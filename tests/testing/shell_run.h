#ifndef AEVATAR_TESTS_TESTING_SHELL_RUN_H_
#define AEVATAR_TESTS_TESTING_SHELL_RUN_H_

#include <string>

namespace aevatar::testing {

// What one command run through a shell printed and how it ended.
struct ShellRun {
  int exit_code = -1;  // -1 when it did not exit normally
  std::string out;
  std::string err;
};

// Runs `command` with /bin/sh, stdin from `stdin_path` (or /dev/null when
// empty), capturing stdout and stderr through files in `dir`.
ShellRun RunShell(const std::string& dir, const std::string& command,
                  const std::string& stdin_path = "");

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_TESTING_SHELL_RUN_H_
