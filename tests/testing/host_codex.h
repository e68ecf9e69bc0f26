#ifndef AEVATAR_TESTS_TESTING_HOST_CODEX_H_
#define AEVATAR_TESTS_TESTING_HOST_CODEX_H_

#include <cstdint>
#include <string>

// The SSH target's side of private_ssh as docs/private-ssh.md installs it,
// for tests: the host's own Codex CLI (its model the responses double) and
// authorized_keys lines that force host/aevatar-codex-wrapper.
namespace aevatar::testing {

inline constexpr char kHostCodex[] = "/opt/aevatar/codex/bin/codex";
inline constexpr char kCodexWrapper[] = AEVATAR_SOURCE_DIR "/host/aevatar-codex-wrapper";

// Writes a Codex home at `dir`/`home` whose provider is the responses double
// on `model_port` and, when `log_in`, logs it in with `api_key` (the host's
// own credential). Not under /tmp: Codex makes no helper aliases
// (codex-linux-sandbox, which workspace-write runs) in a home under /tmp.
// Returns false when a step fails.
bool MakeHostCodexHome(const std::string& dir, const std::string& home, uint16_t model_port,
                       const std::string& api_key, bool log_in);

// The authorized_keys line for public key `pub`: CODEX_HOME=`dir`/`home`,
// the wrapper forced with `options` (e.g. "--workspace /w --codex …") and
// logging to `dir`/wrapper.log, and `restrict`.
std::string WrapperKeyLine(const std::string& dir, const std::string& home,
                           const std::string& options, const std::string& pub);

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_TESTING_HOST_CODEX_H_
