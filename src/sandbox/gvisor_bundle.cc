#include "sandbox/gvisor_bundle.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/errno_error.h"
#include "os/process.h"
#include "os/unique_fd.h"
#include "sandbox/rootfs_plan.h"
#include "sandbox/runtime.h"
#include "sandbox/sandbox_etc.h"

namespace aevatar::sandbox {
namespace {

namespace fs = std::filesystem;

constexpr fs::perms kMode0755 = fs::perms::owner_all | fs::perms::group_read |
                                fs::perms::group_exec | fs::perms::others_read |
                                fs::perms::others_exec;
constexpr fs::perms kMode0644 =
    fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read;

absl::Status FsError(const std::string& what, const std::error_code& ec) {
  return base::ErrnoError(what, ec.value());
}

// mkdir with an exact mode (the process umask does not apply).
absl::Status MakeDir(const std::string& path, fs::perms mode) {
  std::error_code ec;
  fs::create_directory(path, ec);
  if (ec) return FsError("mkdir " + path, ec);
  fs::permissions(path, mode, fs::perm_options::replace, ec);
  if (ec) return FsError("chmod " + path, ec);
  return absl::OkStatus();
}

absl::Status WriteFile(const std::string& path, std::string_view contents, fs::perms mode) {
  {
    os::UniqueFd out(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (out.get() < 0) return base::ErrnoError("open " + path, errno);
    if (auto st = os::WriteAll(out.get(), contents, path); !st.ok()) return st;
    if (::close(out.release()) != 0) return base::ErrnoError("close " + path, errno);
  }
  std::error_code ec;
  fs::permissions(path, mode, fs::perm_options::replace, ec);
  if (ec) return FsError("chmod " + path, ec);
  return absl::OkStatus();
}

}  // namespace

std::string DefaultGvisorScratchBase() {
  if (os::IsWritableDirectory("/run")) return "/run";
  return "/tmp";
}

absl::StatusOr<GvisorRunDir> GvisorRunDir::Create(const std::string& base_dir,
                                                  const std::string& source_path,
                                                  std::string_view source) {
  std::string templ = base_dir + "/chrono-gvisor-XXXXXX";
  // mkdtemp creates the directory 0700 with an unguessable name.
  if (::mkdtemp(templ.data()) == nullptr) return base::ErrnoError("mkdtemp " + templ, errno);
  GvisorRunDir dir(std::move(templ));  // from here on the destructor cleans up
  for (const char* sub : {"/state", "/logs"}) {
    if (auto st = MakeDir(dir.path_ + sub, fs::perms::owner_all); !st.ok()) return st;
  }
  if (auto st = dir.LayOutRootfs(); !st.ok()) return st;
  if (auto st = dir.LayOutWorkspace(source_path, source); !st.ok()) return st;
  return dir;
}

GvisorRunDir::GvisorRunDir(GvisorRunDir&& other) noexcept
    : path_(std::exchange(other.path_, std::string())),
      host_dirs_to_bind_(std::move(other.host_dirs_to_bind_)) {}

GvisorRunDir::~GvisorRunDir() {
  if (path_.empty()) return;
  // remove_all never follows symlinks, so links a program left in the
  // workspace cannot make us delete anything outside this tree.
  std::error_code ec;
  fs::remove_all(path_, ec);
}

absl::Status GvisorRunDir::WriteConfig(std::string_view text) const {
  return WriteFile(config_path(), text, fs::perms::owner_read | fs::perms::owner_write);
}

absl::Status GvisorRunDir::AddServerFiles(const std::vector<ServerFile>& files) const {
  const std::string root = rootfs_dir();
  for (const ServerFile& file : files) {
    // The path is /opt/…, validated: build its directories one by one.
    for (size_t slash = file.sandbox_path.find('/', 1); slash != std::string::npos;
         slash = file.sandbox_path.find('/', slash + 1)) {
      const std::string dir = root + file.sandbox_path.substr(0, slash);
      if (fs::is_directory(dir)) continue;
      if (auto st = MakeDir(dir, kMode0755); !st.ok()) return st;
    }
    constexpr fs::perms kMode0444 =
        fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read;
    // A bound file's mount point is empty; a written file is its contents.
    // (Both arms are views: a std::string arm would make the result a
    // temporary copy, and the view would dangle.)
    const std::string_view contents =
        file.contents != nullptr ? std::string_view(*file.contents) : std::string_view();
    if (auto st = WriteFile(root + file.sandbox_path, contents, kMode0444); !st.ok()) return st;
  }
  return absl::OkStatus();
}

absl::Status GvisorRunDir::AddMemoryDirMountPoints(const std::vector<std::string>& names) const {
  for (const std::string& name : names) {
    if (auto st = MakeDir(absl::StrCat(workspace_dir(), "/", name), kMode0755); !st.ok()) {
      return st;
    }
  }
  return absl::OkStatus();
}

absl::Status GvisorRunDir::LayOutRootfs() {
  const std::string root = rootfs_dir();
  if (auto st = MakeDir(root, kMode0755); !st.ok()) return st;
  // Mount points must exist: the root is read-only to the sandbox, so gVisor
  // could not create them itself.
  for (const char* point : {"/usr", "/proc", "/dev", "/sys", "/tmp", "/workspace", "/etc"}) {
    if (auto st = MakeDir(root + point, kMode0755); !st.ok()) return st;
  }
  // Mirror the host's top-level runtime paths: symlinks into /usr on a
  // merged-/usr host; real directories are bound read-only by the config.
  for (const char* name : {"/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"}) {
    std::error_code ec;
    const fs::file_status status = fs::symlink_status(name, ec);
    if (ec) continue;  // absent on this host
    if (fs::is_symlink(status)) {
      const fs::path target = fs::read_symlink(name, ec);
      if (ec) return FsError(absl::StrCat("readlink ", name), ec);
      fs::create_symlink(target, root + name, ec);
      if (ec) return FsError(absl::StrCat("symlink ", root, name), ec);
    } else if (fs::is_directory(status)) {
      if (auto st = MakeDir(root + name, kMode0755); !st.ok()) return st;
      host_dirs_to_bind_.push_back(name);
    }
  }
  const std::pair<const char*, const char*> etc_files[] = {
      {"passwd", etc::kPasswd},
      {"group", etc::kGroup},
      {"hosts", etc::kHosts},
      {"hostname", "sandbox\n"},
      {"nsswitch.conf", etc::kNsswitch},
      {"resolv.conf", ""},
  };
  for (const auto& [name, contents] : etc_files) {
    if (auto st = WriteFile(absl::StrCat(root, "/etc/", name), contents, kMode0644); !st.ok()) {
      return st;
    }
  }
  return absl::OkStatus();
}

absl::Status GvisorRunDir::LayOutWorkspace(const std::string& source_path,
                                           std::string_view source) {
  const std::string prefix = absl::StrCat(kWorkspaceDir, "/");
  const std::string name = source_path.substr(std::min(prefix.size(), source_path.size()));
  if (!absl::StartsWith(source_path, prefix) || name.empty() || absl::StrContains(name, "/")) {
    return absl::InternalError("the source path must be a file directly in /workspace");
  }
  const std::string workspace = workspace_dir();
  if (auto st = MakeDir(workspace, kMode0755); !st.ok()) return st;
  // The program owns its workspace, as with the native backend's tmpfs; the
  // source file itself stays root's (readable, not writable).
  if (::chown(workspace.c_str(), kSandboxUid, kSandboxGid) != 0) {
    return base::ErrnoError("chown " + workspace, errno);
  }
  return WriteFile(absl::StrCat(workspace, "/", name), source, kMode0644);
}

}  // namespace aevatar::sandbox
