#ifndef AEVATAR_HTTP_CLIENT_H_
#define AEVATAR_HTTP_CLIENT_H_

#include <chrono>
#include <string>

#include "absl/status/statusor.h"
#include "http/message.h"

namespace aevatar::http {

struct ClientRequest {
  std::string method = "GET";
  std::string url;  // http://host:port/path?query (plain HTTP; services talk on loopback or a
                    // private network)
  Headers headers;
  std::string body;
  // The whole exchange (connect, send, receive) must finish within this.
  std::chrono::milliseconds timeout{15000};
  size_t max_response_bytes = 64 << 20;
};

struct ClientResponse {
  int status = 0;
  Headers headers;
  std::string body;
};

// Performs one HTTP/1.1 exchange on a fresh connection. Every status code is a
// successful exchange (the caller interprets 4xx/5xx). Errors: InvalidArgument
// for a bad URL, Unavailable when the connection fails, DeadlineExceeded when
// the timeout passes, ResourceExhausted when the body exceeds the limit.
// Thread-safe.
absl::StatusOr<ClientResponse> Fetch(const ClientRequest& request);

// Like Fetch, but hands the response body to `on_chunk` as it arrives (for
// proxying large bodies and server-sent events); returns the status and
// headers once the body has ended. `on_headers` runs before the first chunk.
// `on_chunk` returning false aborts the exchange (Cancelled).
absl::StatusOr<ClientResponse> FetchStreaming(
    const ClientRequest& request, const std::function<void(const ClientResponse&)>& on_headers,
    const std::function<bool(std::string_view chunk)>& on_chunk);

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_CLIENT_H_
