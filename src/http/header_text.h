#ifndef AEVATAR_HTTP_HEADER_TEXT_H_
#define AEVATAR_HTTP_HEADER_TEXT_H_

// Private to src/http: which header fields a sender may write as given, for
// the Beast framing (beast_private.h) and the in-process exchanges
// (in_process.cc) alike, so a field the wire would drop is dropped by both.

#include <cstddef>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "http/message.h"

namespace aevatar::http {

// The client's bound on an answer's header block, over TCP and in process.
inline constexpr size_t kMaxResponseHeaderBytes = 64 << 10;

// True when a header name or value could not be written safely (CR, LF or NUL
// would let a value forge extra header lines).
inline bool UnsafeHeaderText(std::string_view text) {
  return text.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos;
}

// True for the framing fields a sender computes itself rather than copying
// from a message's headers: Content-Length, Transfer-Encoding, Connection.
inline bool IsFramingField(std::string_view name) {
  const absl::string_view field(name.data(), name.size());  // Debian's absl has its own
  return absl::EqualsIgnoreCase(field, "Content-Length") ||
         absl::EqualsIgnoreCase(field, "Transfer-Encoding") ||
         absl::EqualsIgnoreCase(field, "Connection");
}

// True when a message's header field is written as given.
inline bool WritableField(std::string_view name, std::string_view value) {
  return !name.empty() && !UnsafeHeaderText(name) && !UnsafeHeaderText(value) &&
         !IsFramingField(name);
}

// True when a request carries Content-Length: a body, or a method that
// expects one even when empty (as Beast's prepare_payload decides).
inline bool SendsContentLength(std::string_view method, size_t body_bytes) {
  return body_bytes > 0 || method == "POST" || method == "PUT" || method == "OPTIONS";
}

// True for an RFC 9110 token (a method or a field name): one or more of
// ALPHA, DIGIT and !#$%&'*+-.^_`|~.
inline bool IsToken(std::string_view text) {
  if (text.empty()) return false;
  for (unsigned char c : text) {
    if (!absl::ascii_isalnum(c) &&
        std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

// True for a field value the wire's parser takes: no control character but
// horizontal tab.
inline bool IsFieldValue(std::string_view text) {
  for (unsigned char c : text) {
    if ((c < 0x20 && c != '\t') || c == 0x7f) return false;
  }
  return true;
}

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_HEADER_TEXT_H_
