#include "chrono/credential_sealer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/crypto.h"
#include "base/errno_error.h"
#include "nlohmann/json.hpp"

namespace aevatar::chrono {
namespace {

constexpr size_t kKeyBytes = 32;

absl::StatusOr<std::string> ReadKey(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return base::ErrnoError("open " + path, errno);
  std::string key(kKeyBytes, '\0');
  ssize_t n = ::read(fd, key.data(), key.size());
  ::close(fd);
  if (n != static_cast<ssize_t>(kKeyBytes)) return absl::DataLossError(path + " is not a valid key");
  return key;
}

}  // namespace

absl::StatusOr<CredentialSealer> CredentialSealer::LoadOrCreate(const std::string& state_dir) {
  const std::string path = state_dir + "/at-rest.key";
  auto existing = ReadKey(path);
  if (existing.ok()) return CredentialSealer(*existing);
  if (!absl::IsNotFound(existing.status())) return existing.status();
  std::string key = base::RandomBytes(kKeyBytes);
  // O_EXCL: if two processes race, one wins and the other reads its key.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST) {
      auto raced = ReadKey(path);
      if (!raced.ok()) return raced.status();
      return CredentialSealer(*raced);
    }
    return base::ErrnoError("create " + path, errno);
  }
  bool ok = ::write(fd, key.data(), key.size()) == static_cast<ssize_t>(key.size()) &&
            ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) return absl::InternalError("could not write " + path);
  return CredentialSealer(std::move(key));
}

std::string CredentialSealer::Seal(const std::vector<sandbox::EnvVar>& env) const {
  if (env.empty()) return "";
  nlohmann::json json = nlohmann::json::object();
  for (const auto& var : env) json[var.name] = var.value;
  return base::Base64UrlEncode(base::SecretBoxSeal(key_, json.dump()));
}

absl::StatusOr<std::vector<sandbox::EnvVar>> CredentialSealer::Unseal(
    const std::string& sealed) const {
  std::vector<sandbox::EnvVar> env;
  if (sealed.empty()) return env;
  auto raw = base::Base64UrlDecode(sealed);
  if (!raw.ok()) return absl::DataLossError("sealed credentials are corrupt");
  auto plain = base::SecretBoxOpen(key_, *raw);
  if (!plain.ok()) return plain.status();
  nlohmann::json json = nlohmann::json::parse(*plain, nullptr, false);
  if (!json.is_object()) return absl::DataLossError("sealed credentials are corrupt");
  for (const auto& [name, value] : json.items()) {
    if (value.is_string()) env.push_back({name, value.get<std::string>()});
  }
  return env;
}

}  // namespace aevatar::chrono
