#ifndef AEVATAR_TESTS_TESTING_PROC_FILE_H_
#define AEVATAR_TESTS_TESTING_PROC_FILE_H_

#include <filesystem>
#include <fstream>
#include <string>

namespace aevatar::testing {

// The contents of a /proc file such as /proc/PID/cmdline, or "" when it
// cannot be read. A process may exit while its file is read: libstdc++'s
// filebuf then throws from underflow ("No such process"), which
// istreambuf_iterator lets escape; istream::read turns it into a failed
// stream instead, so scanning /proc never throws.
inline std::string ReadProcFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string contents;
  char buffer[4096];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    contents.append(buffer, static_cast<size_t>(in.gcount()));
    if (!in) break;
  }
  return contents;
}

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_TESTING_PROC_FILE_H_
