#ifndef AEVATAR_HTTP_REQUEST_BODY_H_
#define AEVATAR_HTTP_REQUEST_BODY_H_

// Private to src/http, included by server_framing.h only.

#include <algorithm>
#include <cstdint>
#include <string>

#include "http/beast_private.h"

namespace aevatar::http {

// A Beast body type for requests: a std::string, like bhttp::string_body,
// except that its reader does not reserve the declared Content-Length up
// front. The string grows with the bytes that arrive (the parser's body limit
// bounds them), so a peer that declares a large body and sends little of it
// costs little memory.
struct RequestBody {
  using value_type = std::string;

  static std::uint64_t size(const value_type& body) { return body.size(); }

  class reader {
   public:
    template <bool kIsRequest, class Fields>
    reader(bhttp::header<kIsRequest, Fields>&, value_type& body) : body_(body) {}

    void init(const boost::optional<std::uint64_t>& length, beast::error_code& ec) {
      if (length) body_.reserve(static_cast<size_t>(std::min<std::uint64_t>(*length, kReserve)));
      ec = {};
    }

    template <class ConstBufferSequence>
    std::size_t put(const ConstBufferSequence& buffers, beast::error_code& ec) {
      std::size_t added = 0;
      for (asio::const_buffer buffer : beast::buffers_range_ref(buffers)) {
        body_.append(static_cast<const char*>(buffer.data()), buffer.size());
        added += buffer.size();
      }
      ec = {};
      return added;
    }

    void finish(beast::error_code& ec) { ec = {}; }

   private:
    static constexpr std::uint64_t kReserve = 64 << 10;  // most bodies fit; larger ones grow
    value_type& body_;
  };
};

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_REQUEST_BODY_H_
