#include "doctor/stack_checks.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "aevatar/api/vault_key_source.h"
#include "os/process.h"

namespace aevatar::doctor {
namespace {

namespace fs = std::filesystem;

constexpr fs::perms kGroupOrOthers = fs::perms::group_all | fs::perms::others_all;

bool PrivateToOwner(const std::string& path) {
  std::error_code error;
  return (fs::status(path, error).permissions() & kGroupOrOthers) == fs::perms::none;
}

Finding CheckStateDir(const std::string& state_dir) {
  std::error_code error;
  const fs::file_status status = fs::status(state_dir, error);
  if (!fs::exists(status)) {
    fs::path parent = fs::absolute(state_dir).parent_path();
    while (!fs::exists(parent, error) && parent != parent.parent_path()) {
      parent = parent.parent_path();
    }
    if (os::IsWritableDirectory(parent.string())) {
      return Pass(state_dir + " does not exist yet; aevatar up makes it (0700) on first start");
    }
    return Fail(state_dir + " does not exist and " + parent.string() + " is not writable",
                "create it (mkdir -m 0700 " + state_dir + ") or choose another --state-dir");
  }
  if (!fs::is_directory(status)) {
    return Fail(state_dir + " is not a directory", "choose another --state-dir");
  }
  if (!os::IsWritableDirectory(state_dir)) {
    return Fail(state_dir + " is not writable by this user",
                "run as its owner or chown it to the service's user");
  }
  if (!PrivateToOwner(state_dir)) {
    return Warn(state_dir + " can be read by its group or others (it holds keys and passwords)",
                "chmod 0700 " + state_dir);
  }
  return Pass(state_dir + " is a private directory this user can write");
}

Finding CheckVaultKey(const std::string& state_dir) {
  const std::string aevatar_dir = state_dir + "/aevatar";
  const std::string key_file = aevatar_dir + "/vault.key";
  const char* env = std::getenv(orchestrator::kVaultKeyEnv);
  const bool from_env = env != nullptr && *env != '\0';
  std::error_code error;
  if (!from_env && !fs::exists(key_file, error)) {
    return Pass("no vault key yet; aevatar up makes " + key_file + " (0600) on first start");
  }
  // Both remaining cases only read: an existing file, or the environment.
  auto key = orchestrator::LoadVaultKey("", aevatar_dir);
  if (!key.ok()) {
    return Fail(std::string(key.status().message()),
                from_env ? absl::StrCat("give ", orchestrator::kVaultKeyEnv,
                                        " the key as 64 hex digits (docs/aevatar.md), or unset "
                                        "it and keep the key in the state directory")
                         : "restore " + key_file +
                               " from a backup (mode 0600, 32 bytes); without "
                               "it the sealed credentials cannot be opened");
  }
  if (!key->key_file.empty() && !PrivateToOwner(key->key_file)) {
    return Warn(key->key_file + " can be read by its group or others",
                "chmod 0600 " + key->key_file);
  }
  return Pass(absl::StrCat("the vault key loads from ", key->source,
                           key->key_file.empty() ? "" : " " + key->key_file,
                           key->retiring.empty() ? "" : " (a rotation is under way)"));
}

}  // namespace

std::vector<Check> StackChecks(const std::string& state_dir) {
  return {
      {"state_dir", [state_dir] { return CheckStateDir(state_dir); }},
      {"vault_key", [state_dir] { return CheckVaultKey(state_dir); }},
  };
}

}  // namespace aevatar::doctor
