#ifndef AEVATAR_TESTS_TESTING_RAW_RESPONSE_H_
#define AEVATAR_TESTS_TESTING_RAW_RESPONSE_H_

#include <functional>
#include <optional>
#include <string>

// One HTTP/1.1 response as read off a raw connection (plain TCP or TLS), for
// tests that look at bytes the HTTP client hides: keep-alive, framing.
namespace aevatar::testing {

struct RawResponse {
  int status = 0;
  std::string head;  // status line and header lines, without the blank line
  std::string body;  // Content-Length bytes (empty when there is none)
  // Returns the value of header `name` (case-insensitive), if present.
  std::optional<std::string> Header(const std::string& name) const;
};

// Reads one response framed by Content-Length from `pending` (bytes already
// read), calling `fill` to append more; `fill` returns false on EOF, error or
// timeout. Bytes past the response stay in `pending` for the next call. With
// `expect_body` false (HEAD, 304) no body is read even when Content-Length is
// present. Returns nullopt when `fill` fails first.
std::optional<RawResponse> ReadRawResponse(std::string& pending,
                                           const std::function<bool(std::string&)>& fill,
                                           bool expect_body = true);

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_TESTING_RAW_RESPONSE_H_
