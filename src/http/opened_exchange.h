#ifndef AEVATAR_HTTP_OPENED_EXCHANGE_H_
#define AEVATAR_HTTP_OPENED_EXCHANGE_H_

// An exchange whose answer body the caller reads at its own pace, on
// whichever thread it likes: what a proxy needs to hand an upstream's body
// on to its own caller as it comes.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "http/client.h"

namespace aevatar::http {

// The body of an opened exchange. Read from one thread at a time.
// Destroying it, read to the end or not, tells the server nobody reads any
// more and ends the exchange.
class BodyReader {
 public:
  virtual ~BodyReader() = default;
  // The body's next bytes (never empty), or nullopt once it ended whole.
  // Errors end the body; they are the exchange's errors as for Fetch:
  // DeadlineExceeded once the request's timeout passed, Unavailable for a
  // body that broke off, ResourceExhausted past max_response_bytes.
  virtual absl::StatusOr<std::optional<std::string>> Next() = 0;
};

struct OpenedExchange {
  ClientResponse head;  // the status and header fields; `body` is empty
  std::unique_ptr<BodyReader> body;
};

// Sends `request` and returns once the answer's status and header fields
// are in. Errors until then are those of Fetch. Over a connection the
// exchange runs on a thread of its own and holds at most `queue_limit`
// unread bytes (it waits for the reader past that, as a socket's buffers
// make a sender wait); with a server of this process (in_process.h) no
// thread is needed and the server's own bound holds. The exchange as a
// whole stays within request.timeout either way.
absl::StatusOr<OpenedExchange> OpenExchange(ClientRequest request, size_t queue_limit);

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_OPENED_EXCHANGE_H_
