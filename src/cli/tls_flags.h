#ifndef AEVATAR_CLI_TLS_FLAGS_H_
#define AEVATAR_CLI_TLS_FLAGS_H_

#include <string>

#include "CLI/CLI.hpp"
#include "http/service_tls.h"

namespace aevatar::cli {

// Adds the TLS flags every `serve` shares to `serve`, filling `tls`:
// --tls-cert/--tls-key (HTTPS on the listener), --tls-client-ca (mutual
// TLS: callers must show a certificate from this CA) and --tls-client-name
// (... naming this DNS name), `ca_flags` (default
// "--ca-file": the CA the other services' certificates are checked
// against), --client-cert/--client-key (shown to them) and --insecure-listen.
// `peers` names the other services in the help text.
void AddTlsFlags(CLI::App* serve, http::ServiceTls& tls, const std::string& peers,
                 const std::string& ca_flags = "--ca-file");

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_TLS_FLAGS_H_
