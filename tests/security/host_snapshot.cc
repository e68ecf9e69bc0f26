#include "host_snapshot.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

namespace aevatar::security_test {
namespace {

namespace fs = std::filesystem;

std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool IsNumber(const std::string& name) {
  return !name.empty() &&
         std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isdigit(c); });
}

struct ProcessInfo {
  pid_t ppid = 0;
  std::string comm;
  std::string cgroup;
};

// pid -> ppid, comm, cgroup of every process visible now. Processes that exit
// while we read are skipped.
std::map<pid_t, ProcessInfo> ListProcesses() {
  std::map<pid_t, ProcessInfo> processes;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (!IsNumber(name)) continue;
    const std::string stat = ReadFileOrEmpty("/proc/" + name + "/stat");
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    const size_t open = stat.find('(');
    const size_t close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close + 4 >= stat.size()) {
      continue;
    }
    ProcessInfo info;
    info.comm = stat.substr(open + 1, close - open - 1);
    std::istringstream rest(stat.substr(close + 2));
    char state;
    rest >> state >> info.ppid;
    info.cgroup = ReadFileOrEmpty("/proc/" + name + "/cgroup");
    processes[std::stoi(name)] = std::move(info);
  }
  return processes;
}

bool DescendsFrom(pid_t pid, pid_t ancestor, const std::map<pid_t, ProcessInfo>& processes) {
  for (int depth = 0; depth < 64; ++depth) {
    auto it = processes.find(pid);
    if (it == processes.end() || it->second.ppid <= 0) return false;
    if (it->second.ppid == ancestor) return true;
    pid = it->second.ppid;
  }
  return false;
}

std::string RunCgroupPrefix() { return "run-" + std::to_string(::getpid()) + "-"; }

// Mount points of every cgroup (v1) and cgroup2 hierarchy of the host.
std::vector<std::string> CgroupMountPoints() {
  std::vector<std::string> points;
  std::istringstream lines(ReadFileOrEmpty("/proc/self/mountinfo"));
  for (std::string line; std::getline(lines, line);) {
    // "id parent major:minor root mount-point options ... - fstype source super-options"
    std::istringstream fields(line);
    std::string id, parent, dev, root, mount_point;
    fields >> id >> parent >> dev >> root >> mount_point;
    const size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream tail(line.substr(dash + 3));
    std::string fstype;
    tail >> fstype;
    if (fstype == "cgroup" || fstype == "cgroup2") points.push_back(mount_point);
  }
  return points;
}

std::string Readlink(const std::string& path) {
  std::error_code ec;
  fs::path target = fs::read_symlink(path, ec);
  return ec ? "" : target.string();
}

}  // namespace

HostSnapshot TakeHostSnapshot() {
  HostSnapshot snapshot;
  const pid_t self = ::getpid();
  const std::string in_our_cgroup = "/chrono-sandbox/" + RunCgroupPrefix();
  const std::map<pid_t, ProcessInfo> processes = ListProcesses();
  std::set<std::string> all_namespaces;
  for (const auto& [pid, info] : processes) {
    ++snapshot.all_processes;
    const bool own = pid != self && (DescendsFrom(pid, self, processes) ||
                                     info.cgroup.find(in_our_cgroup) != std::string::npos);
    for (const char* kind : {"net", "mnt", "pid"}) {
      const std::string ns = Readlink("/proc/" + std::to_string(pid) + "/ns/" + kind);
      if (ns.empty()) continue;
      all_namespaces.insert(ns);
      if (own) snapshot.own_namespaces.insert(ns);
    }
    if (own) {
      std::string cgroup_line = info.cgroup.substr(0, info.cgroup.find('\n'));
      snapshot.own_processes.push_back(std::to_string(pid) + " " + info.comm + " " + cgroup_line);
    }
  }
  snapshot.all_namespaces = static_cast<int>(all_namespaces.size());

  const std::string prefix = RunCgroupPrefix();
  for (const std::string& point : CgroupMountPoints()) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(point + "/chrono-sandbox", ec)) {
      const std::string name = entry.path().filename().string();
      if (entry.is_directory() && name.rfind(prefix, 0) == 0) {
        // An empty run cgroup is one the engine keeps for the next run; one
        // that still holds a process is a leftover of a run.
        if (ReadFileOrEmpty(entry.path().string() + "/cgroup.procs").empty()) {
          ++snapshot.idle_run_cgroups;
        } else {
          snapshot.own_run_cgroups.push_back(entry.path().string());
        }
      }
    }
  }

  std::istringstream mountinfo(ReadFileOrEmpty("/proc/self/mountinfo"));
  for (std::string line; std::getline(mountinfo, line);) ++snapshot.mounts;
  return snapshot;
}

std::string DescribeLeftovers(const HostSnapshot& before, const HostSnapshot& after) {
  std::ostringstream out;
  auto list = [&out](const char* what, const std::vector<std::string>& items) {
    out << what << ":";
    for (const auto& item : items) out << "\n    " << item;
    out << "\n";
  };
  if (after.own_processes.size() > before.own_processes.size()) {
    out << "processes left: " << before.own_processes.size() << " -> " << after.own_processes.size()
        << "\n";
    list("  now", after.own_processes);
  }
  if (after.own_namespaces.size() > before.own_namespaces.size()) {
    out << "namespaces left: " << before.own_namespaces.size() << " -> "
        << after.own_namespaces.size() << "\n";
    list("  now", {after.own_namespaces.begin(), after.own_namespaces.end()});
  }
  if (after.own_run_cgroups.size() > before.own_run_cgroups.size()) {
    out << "run cgroups left: " << before.own_run_cgroups.size() << " -> "
        << after.own_run_cgroups.size() << "\n";
    list("  now", after.own_run_cgroups);
  }
  // The engine's cgroup pool keeps at most 8 idle cgroups (one directory per
  // hierarchy each); more means removal is leaking.
  constexpr int kMaxIdleDirs = 8 * 8;
  if (after.idle_run_cgroups > kMaxIdleDirs) {
    out << "idle run cgroups beyond the pool bound: " << after.idle_run_cgroups << "\n";
  }
  if (after.mounts != before.mounts) {
    out << "host mounts changed: " << before.mounts << " -> " << after.mounts << "\n";
  }
  if (out.tellp() > 0) {
    out << "(host-wide, for reference: processes " << before.all_processes << " -> "
        << after.all_processes << ", namespaces " << before.all_namespaces << " -> "
        << after.all_namespaces << ")";
  }
  return out.str();
}

std::string WaitUntilNothingLeft(const HostSnapshot& before, std::chrono::milliseconds timeout) {
  const auto give_up = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    std::string left = DescribeLeftovers(before, TakeHostSnapshot());
    if (left.empty() || std::chrono::steady_clock::now() >= give_up) return left;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::vector<std::string> HostProcessesMatching(const std::string& needle) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (!IsNumber(name)) continue;
    std::string cmdline = ReadFileOrEmpty("/proc/" + name + "/cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(needle) != std::string::npos) found.push_back(name + ": " + cmdline);
  }
  return found;
}

}  // namespace aevatar::security_test
