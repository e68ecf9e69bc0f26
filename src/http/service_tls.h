#ifndef AEVATAR_HTTP_SERVICE_TLS_H_
#define AEVATAR_HTTP_SERVICE_TLS_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "http/client.h"
#include "http/server.h"

namespace aevatar::http {

// How one service (NyxID, chrono-sandbox, aevatar) uses TLS: on its own
// listener, and on its calls to the other services. Every `serve` takes the
// same flags for it (cli/tls_flags.h; docs/deployment.md).
struct ServiceTls {
  ServerTls listen;  // --tls-cert, --tls-key; --tls-client-ca for mutual TLS
  ClientTls peers;   // --ca-file; --client-cert, --client-key for mutual TLS
  // --insecure-listen: serve plain HTTP on an address other hosts can reach
  // (e.g. behind a TLS-terminating proxy on a private network). Warned about.
  bool insecure_listen = false;
};

// True for a loopback host: "localhost", 127.0.0.0/8, ::1.
bool IsLoopbackHost(std::string_view host);

// The start-up check every service runs on its listen host: TLS on, or a
// loopback host, or --insecure-listen (then one warning line naming
// `service`). FailedPrecondition otherwise, saying what to give. Also checks
// that the files `tls` names load (InvalidArgument naming the file), so a
// service refuses to start rather than fail its first call.
absl::Status CheckServiceTls(std::string_view service, const std::string& listen_host,
                             const ServiceTls& tls);

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_SERVICE_TLS_H_
