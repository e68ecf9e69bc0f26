#ifndef AEVATAR_CLI_EMBEDDED_STACK_H_
#define AEVATAR_CLI_EMBEDDED_STACK_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace aevatar::cli {

// `aevatar up`: nyxid, chrono-sandbox and aevatar in one process, on
// loopback, with SQLite state under one directory. They still talk HTTP to
// each other, so this runs the same code as a split deployment.
//
// First start writes, under state_dir:
//   bootstrap.yaml    NyxID seed: an operator (platform admin), a demo user,
//                     the chrono-sandbox catalog service with the compliant
//                     credential contract, the demo user's personal route, and
//                     aevatar's introspection client (hashes only)
//   credentials.json  (0600) the generated passwords, the introspection
//                     secret and the three URLs
// and later starts reuse them (the ports come from credentials.json).
struct EmbeddedStackOptions {
  std::string state_dir = ".state";
  uint16_t port_base = 8080;  // nyxid = base, chrono-sandbox = base+1, aevatar = base+2
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
