#ifndef AEVATAR_HTTP_TLS_H_
#define AEVATAR_HTTP_TLS_H_

// Private to src/http (client.cc, server.cc, websocket.cc): TLS contexts and
// streams, OpenSSL through Asio. Every https exchange verifies its peer: the
// system trust store (plus an optional CA file), the certificate chain, and
// the URL's host name (DNS name or IP address) against the leaf certificate.
// A server with a client CA verifies its clients' chains (mutual TLS; no
// name check: the CA is the service's own). TLS 1.2 is the oldest version
// either side takes.

#include <boost/asio/ssl.hpp>
#include <boost/beast/ssl.hpp>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "http/beast_private.h"
#include "http/client.h"
#include "http/server.h"

namespace aevatar::http {

namespace ssl = boost::asio::ssl;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// Returns a client context that trusts the system store and, when
// `tls.ca_file` is not empty, the CA certificates in that PEM file
// (verify_peer on), and presents `tls`'s client certificate when one is
// named. InvalidArgument when a file cannot be loaded or the key does not
// match the certificate; Internal when OpenSSL cannot make a context. Never
// throws.
absl::StatusOr<std::unique_ptr<ssl::context>> MakeClientTlsContext(const ClientTls& tls);

// Like MakeClientTlsContext, but built once per `tls` for the life of the
// process and shared (building one parses the system store: tens of ms; a
// configured context is safe to use from many threads). A failure is not
// kept, so a repaired file is picked up by the next exchange; a changed one
// only by a restart. Thread-safe.
absl::StatusOr<std::shared_ptr<ssl::context>> SharedClientTlsContext(const ClientTls& tls);

// Returns a server context presenting `tls`'s certificate and, when
// `tls.client_ca_file` is set, requiring client certificates that chain to
// it. InvalidArgument naming the file that cannot be loaded. Never throws.
absl::StatusOr<std::shared_ptr<ssl::context>> MakeServerTlsContext(const ServerTls& tls);

// Loads a certificate chain (PEM, leaf first) and its private key into
// `context`, checking that they match. InvalidArgument naming the file
// otherwise. Shared by the client (mutual TLS) and the server.
absl::Status LoadCertificate(ssl::context& context, const std::string& cert_file,
                             const std::string& key_file);

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

#endif  // AEVATAR_HTTP_TLS_H_
