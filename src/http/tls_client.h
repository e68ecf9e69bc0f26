#ifndef AEVATAR_HTTP_TLS_CLIENT_H_
#define AEVATAR_HTTP_TLS_CLIENT_H_

// Private to src/http (client.cc and tls_client.cc): the client side of TLS,
// OpenSSL through Asio. Every https exchange verifies its peer: the system
// trust store (plus an optional CA file), the certificate chain, and the
// URL's host name (DNS name or IP address) against the leaf certificate.
// TLS 1.2 is the oldest version offered.

#include <boost/asio/ssl.hpp>
#include <boost/beast/ssl.hpp>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "http/beast_private.h"

namespace aevatar::http {

namespace ssl = boost::asio::ssl;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// Returns a client context that trusts the system store and, when `ca_file`
// is not empty, the CA certificates in that PEM file; verify_peer is on.
// InvalidArgument when `ca_file` cannot be loaded; Internal when OpenSSL
// cannot make a context. Never throws.
absl::StatusOr<std::unique_ptr<ssl::context>> MakeClientTlsContext(const std::string& ca_file);

// Like MakeClientTlsContext, but built once per `ca_file` for the life of the
// process and shared (building one parses the system store: tens of ms; a
// configured context is safe to use from many threads). A failure is not
// kept, so a repaired CA file is picked up by the next exchange; a changed
// one only by a restart. Thread-safe.
absl::StatusOr<std::shared_ptr<ssl::context>> SharedClientTlsContext(const std::string& ca_file);

// Prepares `stream` for the handshake with `host` (the URL's host): SNI for
// a DNS name (never for an IP literal) and the host name check. Unavailable
// when OpenSSL refuses the name.
absl::Status PrepareTlsStream(TlsStream& stream, const std::string& host);

// The Status for a failed handshake (not a timeout) with `where`
// ("host:port"): Unavailable, naming TLS verification and OpenSSL's reason
// when the certificate failed verification, else the handshake failure.
absl::Status TlsHandshakeError(TlsStream& stream, const beast::error_code& ec,
                               const std::string& where);

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_TLS_CLIENT_H_
