#ifndef AEVATAR_HTTP_CLIENT_H_
#define AEVATAR_HTTP_CLIENT_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <tuple>

#include "absl/status/statusor.h"
#include "http/connection_pool.h"
#include "http/message.h"

namespace aevatar::http {

// What an https exchange trusts and presents. The peer is always verified
// (chain and host name, TLS 1.2 at least); these only add to that.
struct ClientTls {
  // A PEM file of extra trusted CA certificates (a private CA or a test's);
  // empty: the system trust store alone.
  std::string ca_file;
  // A client certificate chain (PEM, leaf first) and its private key, shown
  // to a server that asks for one (mutual TLS between the services). Both or
  // neither.
  std::string cert_file;
  std::string key_file;

  bool operator<(const ClientTls& other) const {
    return std::tie(ca_file, cert_file, key_file) <
           std::tie(other.ca_file, other.cert_file, other.key_file);
  }
};

struct ClientRequest {
  std::string method = "GET";
  // http://host:port/path?query, or https:// for TLS (see ClientTls).
  std::string url;
  Headers headers;
  std::string body;
  // The whole exchange (connect, send, receive) must finish within this.
  std::chrono::milliseconds timeout{15000};
  size_t max_response_bytes = 64 << 20;
  ClientTls tls;  // https only
  // Where kept-alive connections are reused from and parked (shared so that
  // an exchange on a detached thread keeps it alive). Null: a fresh
  // connection, closed after the exchange (`Connection: close`).
  std::shared_ptr<ConnectionPool> pool;
};

struct ClientResponse {
  int status = 0;
  Headers headers;
  std::string body;
};

// Performs one HTTP/1.1 exchange, on a fresh connection or, with
// `request.pool`, on an idle one from the pool when it has one that is still
// open (parked again afterwards if the server keeps it open and the whole
// response was read). When a reused connection ends before any byte of the
// answer (the server closed it as it went idle), the request is sent once
// more on a fresh connection only if that is safe: an idempotent method
// (GET, HEAD, OPTIONS, TRACE, PUT, DELETE) or a request of which no byte was
// written. Otherwise, since the server may have acted on it, the result is
// Unavailable ("closed the kept-alive connection …, not replayed") and
// nothing is sent again. Every status code is a
// successful exchange (the caller interprets 4xx/5xx). Errors: InvalidArgument
// for a bad URL or unusable `tls` files, Unavailable when the connection
// fails (for https also a failed TLS handshake, and a certificate that fails
// verification: the message then says "TLS verification failed" and why),
// DeadlineExceeded when the timeout passes (the TLS handshake included),
// ResourceExhausted when the body exceeds the limit. Thread-safe.
absl::StatusOr<ClientResponse> Fetch(const ClientRequest& request);

// Like Fetch, but hands the response body to `on_chunk` as it arrives (for
// proxying large bodies and server-sent events); returns the status and
// headers once the body has ended. `on_headers` runs before the first chunk.
// `on_chunk` returning false aborts the exchange (Cancelled).
absl::StatusOr<ClientResponse> FetchStreaming(
    const ClientRequest& request, const std::function<void(const ClientResponse&)>& on_headers,
    const std::function<bool(std::string_view chunk)>& on_chunk);

// Returns OK when `path` is a readable PEM file holding at least one CA
// certificate usable as ClientTls::ca_file; InvalidArgument otherwise.
// For validating configuration once at start-up.
absl::Status CheckCaFile(const std::string& path);

// Returns OK when every file `tls` names loads (the CA file, and the client
// certificate with a private key that matches it); InvalidArgument naming the
// file otherwise. For validating configuration once at start-up; the context
// it builds is kept for the exchanges that use `tls`.
absl::Status CheckClientTls(const ClientTls& tls);

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_CLIENT_H_
