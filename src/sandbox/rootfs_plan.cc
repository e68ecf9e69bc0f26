#include "sandbox/rootfs_plan.h"

#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "os/process.h"
#include "sandbox/sandbox_etc.h"

namespace aevatar::sandbox {
namespace {

using Kind = os::FsStep::Kind;

constexpr unsigned long kNoSuidNoDev = MS_NOSUID | MS_NODEV;

}  // namespace

RootfsPlan::RootfsPlan(const Limits& limits, const std::string& source_path,
                       const std::string& source, const std::vector<ServerFile>& server_files,
                       const std::vector<std::string>& memory_dirs, const RuntimeLayout& layout) {
  // 1 MiB holds the directories and /etc; written server files come on top.
  uint64_t root_bytes = 1ull << 20;
  for (const ServerFile& file : server_files) {
    if (file.contents != nullptr) root_bytes += file.contents->size();
  }
  root_options_ = absl::StrCat("size=", root_bytes, ",nr_inodes=4096,mode=0755");
  steps_.push_back({.kind = Kind::kMkdir, .path = Under("/usr"), .mode = 0755});
  steps_.push_back(
      {.kind = Kind::kBindRo, .path = Under("/usr"), .source = "/usr", .flags = kNoSuidNoDev});
  AddHostUsrLinks();
  // Third-party libraries come only from a chosen runtime (runtime_env.h).
  for (const std::string& dir : layout.hidden_dirs) {
    steps_.push_back({.kind = Kind::kMount,
                      .path = Under(dir),
                      .source = "tmpfs",
                      .fstype = "tmpfs",
                      .flags = kNoSuidNoDev | MS_NOEXEC | MS_RDONLY,
                      .data = "size=4k,nr_inodes=4,mode=0755"});
  }
  AddEtc();
  steps_.push_back({.kind = Kind::kMkdir, .path = Under("/proc"), .mode = 0555});
  // hidepid=2: the program sees only its own uid's processes. The sandbox
  // init is a fork of the service (no execve), so its cmdline and status
  // would otherwise show the service's argv and credentials.
  steps_.push_back({.kind = Kind::kMount,
                    .path = Under("/proc"),
                    .source = "proc",
                    .fstype = "proc",
                    .flags = kNoSuidNoDev | MS_NOEXEC,
                    .data = "hidepid=2"});
  AddDev(limits);

  const std::string tmpfs_size = absl::StrCat("size=", limits.tmpfs_bytes, ",nr_inodes=16384");
  steps_.push_back({.kind = Kind::kMkdir, .path = Under("/tmp"), .mode = 01777});
  steps_.push_back({.kind = Kind::kMount,
                    .path = Under("/tmp"),
                    .source = "tmpfs",
                    .fstype = "tmpfs",
                    .flags = kNoSuidNoDev,
                    .data = Keep(tmpfs_size + ",mode=1777")});
  // The workspace and each memory dir: the program's own tmpfs.
  const char* workspace_options =
      Keep(absl::StrCat(tmpfs_size, ",mode=0755,uid=", kSandboxUid, ",gid=", kSandboxGid));
  auto add_workspace_tmpfs = [&](const std::string& path) {
    steps_.push_back({.kind = Kind::kMkdir, .path = Under(path), .mode = 0755});
    steps_.push_back({.kind = Kind::kMount,
                      .path = Under(path),
                      .source = "tmpfs",
                      .fstype = "tmpfs",
                      .flags = kNoSuidNoDev,
                      .data = workspace_options});
  };
  add_workspace_tmpfs("/workspace");
  for (const std::string& name : memory_dirs) add_workspace_tmpfs("/workspace/" + name);
  if (!source_path.empty()) {  // empty: the program arrives later (warm_python.h)
    const std::string& kept_source = strings_.emplace_back(source);
    steps_.push_back({.kind = Kind::kWriteFile,
                      .path = Under(source_path),
                      .data = kept_source.data(),
                      .data_len = kept_source.size(),
                      .mode = 0644});
  }
  AddRuntime(layout);
  for (const ServerFile& file : server_files) AddServerFile(file);
}

const char* RootfsPlan::Keep(std::string text) {
  return strings_.emplace_back(std::move(text)).c_str();
}

const char* RootfsPlan::Under(const std::string& path) {
  return Keep(absl::StrCat(kRootMountPoint, path));
}

// Mirrors the host's top-level runtime paths: on merged-/usr hosts they are
// symlinks into /usr; elsewhere they are bound read-only.
void RootfsPlan::AddHostUsrLinks() {
  for (const char* name : {"/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"}) {
    const os::HostPath host = os::InspectHostPath(name);
    if (host.kind == os::HostPath::Kind::kSymlink) {
      steps_.push_back(
          {.kind = Kind::kSymlink, .path = Under(name), .source = Keep(host.link_target)});
    } else if (host.kind == os::HostPath::Kind::kDirectory) {
      steps_.push_back({.kind = Kind::kMkdir, .path = Under(name), .mode = 0755});
      steps_.push_back(
          {.kind = Kind::kBindRo, .path = Under(name), .source = name, .flags = kNoSuidNoDev});
    }
  }
}

void RootfsPlan::AddParents(const std::string& path) {
  for (size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    steps_.push_back({.kind = Kind::kMkdir, .path = Under(path.substr(0, slash)), .mode = 0755});
  }
}

// The root was checked at start-up (CheckRuntimeRoot): absolute, not under
// /tmp. Bound without MS_NOEXEC: native extensions (numpy's) are mapped
// executable.
void RootfsPlan::AddRuntime(const RuntimeLayout& layout) {
  if (!layout.host_root.empty()) {
    AddParents(layout.sandbox_dir);
    steps_.push_back({.kind = Kind::kMkdir, .path = Under(layout.sandbox_dir), .mode = 0755});
    steps_.push_back({.kind = Kind::kBindRo,
                      .path = Under(layout.sandbox_dir),
                      .source = Keep(layout.host_root),
                      .flags = kNoSuidNoDev});
  }
  for (const RuntimeLayout::Link& link : layout.links) {
    AddParents(link.path);
    steps_.push_back(
        {.kind = Kind::kSymlink, .path = Under(link.path), .source = Keep(link.target)});
  }
}

// The path was validated (ValidateServerFiles): /opt/…, normal segments.
void RootfsPlan::AddServerFile(const ServerFile& file) {
  AddParents(file.sandbox_path);
  const char* target = Under(file.sandbox_path);
  if (file.contents != nullptr) {
    contents_.push_back(file.contents);
    steps_.push_back({.kind = Kind::kWriteFile,
                      .path = target,
                      .data = file.contents->data(),
                      .data_len = file.contents->size(),
                      .mode = 0444});
    return;
  }
  steps_.push_back({.kind = Kind::kTouch, .path = target, .mode = 0444});
  steps_.push_back({.kind = Kind::kBindRo,
                    .path = target,
                    .source = Keep(file.host_path),
                    .flags = kNoSuidNoDev});
}

void RootfsPlan::AddEtc() {
  steps_.push_back({.kind = Kind::kMkdir, .path = Under("/etc"), .mode = 0755});
  auto file = [&](const char* name, const char* contents) {
    steps_.push_back({.kind = Kind::kWriteFile,
                      .path = Under(absl::StrCat("/etc/", name)),
                      .data = contents,
                      .data_len = std::char_traits<char>::length(contents),
                      .mode = 0644});
  };
  file("passwd", etc::kPasswd);
  file("group", etc::kGroup);
  file("hosts", etc::kHosts);
  file("hostname", "sandbox\n");
  file("nsswitch.conf", etc::kNsswitch);
  file("resolv.conf", "");
}

void RootfsPlan::AddDev(const Limits& limits) {
  steps_.push_back({.kind = Kind::kMkdir, .path = Under("/dev"), .mode = 0755});
  steps_.push_back({.kind = Kind::kMount,
                    .path = Under("/dev"),
                    .source = "tmpfs",
                    .fstype = "tmpfs",
                    .flags = MS_NOSUID | MS_NOEXEC,
                    .data = "size=64k,nr_inodes=64,mode=0755"});
  // The same devices as the host's (Linux's fixed numbers for the memory
  // devices), made in place: cheaper than binding the host's nodes.
  for (auto [node, minor] :
       {std::pair{"null", 3u}, {"zero", 5u}, {"full", 7u}, {"random", 8u}, {"urandom", 9u}}) {
    steps_.push_back({.kind = Kind::kCharDevice,
                      .path = Under(absl::StrCat("/dev/", node)),
                      .flags = static_cast<unsigned long>(makedev(1, minor)),
                      .mode = 0666});
  }
  for (auto [name, target] : {std::pair{"fd", "/proc/self/fd"},
                              {"stdin", "/proc/self/fd/0"},
                              {"stdout", "/proc/self/fd/1"},
                              {"stderr", "/proc/self/fd/2"}}) {
    steps_.push_back(
        {.kind = Kind::kSymlink, .path = Under(absl::StrCat("/dev/", name)), .source = target});
  }
  steps_.push_back({.kind = Kind::kMkdir, .path = Under("/dev/shm"), .mode = 01777});
  steps_.push_back(
      {.kind = Kind::kMount,
       .path = Under("/dev/shm"),
       .source = "tmpfs",
       .fstype = "tmpfs",
       .flags = kNoSuidNoDev,
       .data = Keep(absl::StrCat("size=", limits.tmpfs_bytes, ",nr_inodes=1024,mode=1777"))});
}

}  // namespace aevatar::sandbox
