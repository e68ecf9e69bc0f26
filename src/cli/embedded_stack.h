#ifndef AEVATAR_CLI_EMBEDDED_STACK_H_
#define AEVATAR_CLI_EMBEDDED_STACK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sandbox/runtime_env.h"

namespace aevatar::cli {

// `aevatar up`: nyxid, chrono-sandbox and aevatar in one process, on
// loopback, with SQLite state under one directory. They still talk HTTP to
// each other, so this runs the same code as a split deployment.
//
// First start writes, under state_dir, credentials.json (0600): the generated
// passwords, the introspection secret and the three URLs; later starts reuse
// it (the ports come from there). Every start writes bootstrap.yaml, the NyxID
// seed from these options: an operator (platform admin), a demo user, the
// chrono-sandbox catalog service with the compliant credential contract, the
// demo user's personal route, aevatar's introspection client (hashes only)
// and, with an LLM upstream, the chrono-llm-public catalog service.
// The model provider behind managed codex_exec: any OpenAI Responses-API
// base URL. NyxID keeps the key (sealed) and injects it upstream; no sandbox
// or caller ever sees it. Without an upstream, codex_exec readiness says so.
struct LlmUpstreamOptions {
  std::string base_url;      // e.g. https://provider.example/v1; empty: none
  std::string api_key_file;  // the provider key, a private file (0600)
  std::string model;         // the one model Codex is configured with
  std::string ca_file;       // PEM CA(s) an https upstream is verified against; empty: system store
  std::string codex_backend = "gvisor";  // isolation of managed Codex runs: gvisor | native
};

struct EmbeddedStackOptions {
  std::string state_dir = ".state";
  uint16_t port_base = 8080;  // nyxid = base, chrono-sandbox = base+1, aevatar = base+2
  LlmUpstreamOptions llm;
  // "" (SQLite under state_dir) or a PostgreSQL URL shared by the stores of
  // all three services (each keeps its own prefixed tables); the at-rest
  // and vault keys stay under state_dir.
  std::string store;
  // Runtime environments chrono-sandbox mounts for the calls that choose
  // them, and aevatar advertises (names and languages).
  std::vector<sandbox::RuntimeEnv> runtimes;
  // Sandbox runs chrono-sandbox executes at once (its --workers); 0: one
  // per core.
  int sandbox_workers = 0;
  // Warm Python sandboxes chrono-sandbox keeps (its --warm-python); 0: none.
  int warm_python = 0;
  // The bundled skills aevatar publishes to its skill registry at start
  // (a folder of skill directories); empty: none.
  std::string skills_dir;
};

struct EmbeddedStackInfo {
  std::string nyxid_url;
  std::string chrono_url;
  std::string aevatar_url;
  std::string credentials_file;
  bool first_start = false;
};

class EmbeddedStack {
 public:
  static absl::StatusOr<std::unique_ptr<EmbeddedStack>> Start(const EmbeddedStackOptions& options);
  virtual ~EmbeddedStack() = default;
  virtual const EmbeddedStackInfo& info() const = 0;
  // Stops aevatar, chrono-sandbox and nyxid, in that order; idempotent.
  virtual void Stop() = 0;
};

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_EMBEDDED_STACK_H_
