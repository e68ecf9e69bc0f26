#ifndef AEVATAR_SANDBOX_WARM_PYTHON_H_
#define AEVATAR_SANDBOX_WARM_PYTHON_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace aevatar::sandbox {

// A warm Python sandbox starts its interpreter before any program exists:
// `python3 -I -c <start-up> <program path>` under the run's full
// containment, blocked reading its stdin. At dispatch the engine writes
// WarmPythonInput(source, stdin) into that stdin (a pipe) and closes it.
// The start-up code reads the length-prefixed program, writes it to the
// program path, makes `__main__`, sys.argv and sys.orig_argv what
// `python3 -I <program path>` gives, and runs it; whatever follows the
// program on the pipe is the program's stdin.
//
// What a program can still tell apart from a cold start (its stdin is a
// pipe, its program file is the sandbox user's, its command line, one frame
// above its module, …) is listed in docs/security.md §4, "Warm Python
// sandboxes"; tests/sandbox/warm_python_test.cc compares the rest with a
// cold start.

// The interpreter's argv for a warm sandbox whose program goes to
// `program_path` (e.g. /workspace/main.py).
std::vector<std::string> WarmPythonArgv(const std::string& program_path);

// How an engine's warm Python sandboxes fare.
struct WarmPythonStats {
  size_t ready = 0;     // started and waiting for a program
  size_t served = 0;    // runs that took one
  size_t failures = 0;  // warm starts that failed (each retried after a second)
};

// What the engine writes into a warm sandbox's stdin: the program's length
// (8 bytes, little-endian), the program, then the program's stdin.
std::string WarmPythonInput(std::string_view source, std::string_view stdin_data);

}  // namespace aevatar::sandbox

#endif  // AEVATAR_SANDBOX_WARM_PYTHON_H_
