// aevatar vault rotate-key.
#include "cli/aevatar_vault_command.h"

#include <chrono>
#include <filesystem>
#include <iostream>
#include <thread>

#include "CLI/CLI.hpp"
#include "aevatar/vault/key_rotation.h"
#include "base/api_error.h"
#include "base/crypto.h"
#include "cli/server_replies.h"
#include "os/atomic_file.h"

namespace aevatar::cli {
namespace {

constexpr size_t kKeyBytes = 32;
constexpr auto kPollEvery = std::chrono::milliseconds(200);

// Whether the rotation to `new_key` has finished: nothing is staged any more
// and the key file holds the new key.
bool Rotated(const std::string& key_file, const std::string& new_key) {
  std::error_code error;
  if (std::filesystem::exists(orchestrator::StagedKeyPath(key_file), error)) return false;
  auto current = os::ReadPrivateFile(key_file, kKeyBytes + 1);
  return current.ok() && *current == new_key;
}

// "aevatar vault rotate-key: MESSAGE" on stderr, and with --json the problem
// object on stdout. Returns `exit_code`.
int VaultFail(const VaultOptions& options, const std::string& code, const std::string& message,
              int exit_code) {
  std::cerr << "aevatar vault rotate-key: " << message << "\n";
  if (options.json) std::cout << LocalProblemObject(code, message).dump() << "\n";
  return exit_code;
}

// The state after staging (and waiting, unless --wait-secs 0): never a key.
void PrintDone(const VaultOptions& options, const std::string& key_file, bool rotated) {
  if (!options.json) return;
  std::cout << nlohmann::json{{"key_file", key_file},
                              {"staged", orchestrator::StagedKeyPath(key_file)},
                              {"rotated", rotated}}
                   .dump()
            << "\n";
}

}  // namespace

CLI::App* AddVaultCommand(CLI::App& app, VaultOptions& options) {
  CLI::App* vault = app.add_subcommand("vault", "aevatar's vault key");
  vault->require_subcommand(1);
  CLI::App* rotate = vault->add_subcommand(
      "rotate-key", "Reseal everything aevatar keeps under a new vault key, without downtime");
  auto* key_file = rotate->add_option("--vault-key-file", options.key_file,
                                      "The key file aevatar serve was given (--vault-key-file)");
  rotate
      ->add_option("--state-dir", options.state_dir,
                   "aevatar's state directory, when the key is its vault.key (the default)")
      ->excludes(key_file);
  rotate->add_option("--new-key-file", options.new_key_file,
                     "Take the new key (32 bytes, mode 0600) from this file; default: random");
  rotate->add_option("--wait-secs", options.wait_secs,
                     "How long to wait for the running aevatar to finish (0: do not wait)");
  rotate->add_flag("--json", options.json,
                   "Print {key_file, staged, rotated} (never a key) as one JSON document");
  return rotate;
}

int RunVaultCommand(const VaultOptions& options) {
  if (options.key_file.empty() == options.state_dir.empty()) {
    return VaultFail(options, "INVALID_ARGUMENT", "give --vault-key-file or --state-dir", 2);
  }
  const std::string key_file =
      options.key_file.empty() ? options.state_dir + "/vault.key" : options.key_file;
  std::string new_key = base::RandomBytes(kKeyBytes);
  if (!options.new_key_file.empty()) {
    auto given = os::ReadPrivateFile(options.new_key_file, kKeyBytes + 1);
    if (!given.ok() || given->size() != kKeyBytes) {
      return VaultFail(options, "INVALID_ARGUMENT",
                       "--new-key-file must be a private file of exactly 32 bytes" +
                           (given.ok() ? "" : ": " + std::string(given.status().message())),
                       2);
    }
    new_key = *std::move(given);
  }
  if (absl::Status st = orchestrator::StageNextKey(key_file, new_key); !st.ok()) {
    return VaultFail(options, base::ApiCode(st), std::string(st.message()), 1);
  }
  if (!options.json) {
    std::cout << "staged the new vault key in " << orchestrator::StagedKeyPath(key_file) << "\n";
  }
  if (options.wait_secs <= 0) {
    PrintDone(options, key_file, false);
    return 0;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(options.wait_secs);
  while (!Rotated(key_file, new_key)) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return VaultFail(
          options, "DEADLINE_EXCEEDED",
          "not finished after " + std::to_string(options.wait_secs) +
              " s. It stays staged: a running aevatar goes on with it (its log says "
              "aevatar.vault_rotation.done or .failed), a stopped one resumes at its next start. "
              "Keep " +
              orchestrator::StagedKeyPath(key_file) + " and " + key_file + " until then.",
          1);
    }
    std::this_thread::sleep_for(kPollEvery);
  }
  if (options.json) {
    PrintDone(options, key_file, true);
    return 0;
  }
  std::cout << "rotated: everything aevatar keeps is sealed under the new key, now in " << key_file
            << "; the old key opens none of it\n";
  return 0;
}

}  // namespace aevatar::cli
