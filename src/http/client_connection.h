#ifndef AEVATAR_HTTP_CLIENT_CONNECTION_H_
#define AEVATAR_HTTP_CLIENT_CONNECTION_H_

// Private to src/http (client.cc, connection_pool.cc): one client connection
// with the io_context its exchanges run on. Each connection owns its context
// so that a parked connection can be picked up by any thread: the exchange
// runs that context on the caller's thread, one exchange at a time (the pool
// hands a connection to one owner at a time).

#include <memory>
#include <optional>

#include "http/beast_private.h"
#include "http/connection_pool.h"
#include "http/tls.h"

namespace aevatar::http {

struct PooledConnection {
  // Declared first so it is destroyed last: the streams are bound to it.
  std::unique_ptr<asio::io_context> ioc = std::make_unique<asio::io_context>(1);
  // Exactly one of these once connected: plain http or https.
  std::optional<beast::tcp_stream> plain;
  std::optional<TlsStream> tls;
  // The context `tls` was made from; kept alive as long as the stream.
  std::shared_ptr<ssl::context> tls_context;

  beast::tcp_stream& Tcp() { return tls ? beast::get_lowest_layer(*tls) : *plain; }
  bool connected() { return (plain || tls) && Tcp().socket().is_open(); }

  // True when the idle connection can carry another request: the socket is
  // open, the peer has not closed or reset it, and nothing unread is waiting
  // (an idle server sends nothing; bytes there are a close_notify or junk, so
  // the connection is given up rather than interpreted). Never blocks.
  bool StillOpen() {
    if (!connected()) return false;
    tcp::socket& socket = Tcp().socket();
    beast::error_code ec;
    socket.non_blocking(true, ec);
    if (ec) return false;
    char byte;
    socket.receive(asio::buffer(&byte, 1), tcp::socket::message_peek, ec);
    bool open = ec == asio::error::would_block;
    socket.non_blocking(false, ec);
    return open && !ec;
  }
};

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_CLIENT_CONNECTION_H_
