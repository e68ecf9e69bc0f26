#ifndef AEVATAR_HTTP_BEAST_PRIVATE_H_
#define AEVATAR_HTTP_BEAST_PRIVATE_H_

// Private to src/http: the one place Boost.Beast/Asio headers are included,
// and only server.cc (directly and through its private server_*.h and
// request_body.h headers), client.cc (and client_connection.h, so
// connection_pool.cc), tls.cc and websocket.cc include this
// file (each such translation unit takes ~12 s to compile here, so keep the
// list short).

// Must precede every Boost header: Boost 1.74's asio/awaitable.hpp uses
// std::exchange without including <utility>.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <string>
#include <string_view>
#include <utility>

#include "http/header_text.h"
#include "http/message.h"

namespace aevatar::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;  // "http" is our own namespace
using tcp = boost::asio::ip::tcp;

// Adapts an Asio operation to a coroutine that reports errors in `ec` instead
// of throwing, so every failure is handled where it happens.
inline auto NoThrow(beast::error_code& ec) { return asio::redirect_error(asio::use_awaitable, ec); }

inline std::string_view ToStringView(beast::string_view s) { return {s.data(), s.size()}; }

// Copies Beast fields into our Headers, in arrival order.
inline void CopyFromFields(const bhttp::fields& fields, Headers& out) {
  for (const auto& field : fields) {
    out.Add(std::string(ToStringView(field.name_string())),
            std::string(ToStringView(field.value())));
  }
}

// Copies `headers` into a Beast message, except framing fields the sender
// computes itself (Content-Length, Transfer-Encoding, Connection) and fields
// that are unsafe to write.
inline void CopyToFields(const Headers& headers, bhttp::fields& out) {
  for (const auto& [name, value] : headers.fields()) {
    if (WritableField(name, value)) out.insert(name, value);
  }
}

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_BEAST_PRIVATE_H_
