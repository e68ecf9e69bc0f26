#ifndef AEVATAR_TESTS_TESTING_PROC_FILE_H_
#define AEVATAR_TESTS_TESTING_PROC_FILE_H_

#include <sys/types.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
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

// Every live process's parent: pid -> ppid, read from /proc/PID/stat. A
// process that exits mid-scan is simply left out.
inline std::map<pid_t, pid_t> ParentPids() {
  std::map<pid_t, pid_t> parents;
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc", ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = ReadProcFile(it->path() / "stat");
    // "pid (comm) state ppid …": comm may hold spaces and parentheses.
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    std::string state;
    pid_t ppid = 0;
    if (rest >> state >> ppid) parents[std::stoi(name)] = ppid;
  }
  return parents;
}

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_TESTING_PROC_FILE_H_
