#ifndef AEVATAR_HTTP_CLIENT_H_
#define AEVATAR_HTTP_CLIENT_H_

#include <chrono>
#include <string>

#include "absl/status/statusor.h"
#include "http/message.h"

namespace aevatar::http {

struct ClientRequest {
  std::string method = "GET";
  // http://host:port/path?query, or https:// for TLS: always verified against
  // the system trust store (plus `ca_file`), host name checked, TLS 1.2 at least.
  std::string url;
  Headers headers;
  std::string body;
  // The whole exchange (connect, send, receive) must finish within this.
  std::chrono::milliseconds timeout{15000};
  size_t max_response_bytes = 64 << 20;
  // https only: a PEM file of extra trusted CA certificates (a private CA or a
  // test's); empty: the system trust store alone.
  std::string ca_file;
};

struct ClientResponse {
  int status = 0;
  Headers headers;
  std::string body;
};

// Performs one HTTP/1.1 exchange on a fresh connection. Every status code is a
// successful exchange (the caller interprets 4xx/5xx). Errors: InvalidArgument
// for a bad URL or an unusable `ca_file`, Unavailable when the connection
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
// certificate usable as ClientRequest::ca_file; InvalidArgument otherwise.
// For validating configuration once at start-up.
absl::Status CheckCaFile(const std::string& path);

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_CLIENT_H_
