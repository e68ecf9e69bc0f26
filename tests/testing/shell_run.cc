#include "testing/shell_run.h"

#include <sys/wait.h>

#include <cstdlib>

#include "testing/proc_file.h"

namespace aevatar::testing {

ShellRun RunShell(const std::string& dir, const std::string& command,
                  const std::string& stdin_path) {
  const std::string out = dir + "/run.out";
  const std::string err = dir + "/run.err";
  const std::string line = command + " <'" + (stdin_path.empty() ? "/dev/null" : stdin_path) +
                           "' >'" + out + "' 2>'" + err + "'";
  const int status = std::system(line.c_str());
  ShellRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = ReadProcFile(out);
  run.err = ReadProcFile(err);
  return run;
}

}  // namespace aevatar::testing
