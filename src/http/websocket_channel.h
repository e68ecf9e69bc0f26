#ifndef AEVATAR_HTTP_WEBSOCKET_CHANNEL_H_
#define AEVATAR_HTTP_WEBSOCKET_CHANNEL_H_

// Private to src/http (server.cc through server_handler_thread.h, and
// websocket.cc): a WebSocket over a beast::tcp_stream or a TLS stream
// (BasicWebSocketChannel<TlsStream>) whose operations
// all run on the stream's strand. The calling thread posts each operation to
// the strand and blocks until it completes, the same way the server's
// handler threads drive a streamed response, so Read and Write can block on
// two threads while the socket is only ever touched on its strand.

#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <functional>
#include <future>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "http/beast_private.h"
#include "http/tls.h"
#include "http/websocket.h"

namespace aevatar::http {

namespace websocket = boost::beast::websocket;

// What ends a blocked wait from outside: `stopping` asks the connection to
// close (the server is stopping); `io_gone` says its I/O threads are joined,
// so a posted operation will never complete.
struct ChannelEnd {
  std::function<bool()> stopping = [] { return false; };
  std::function<bool()> io_gone = [] { return false; };
};

template <class NextLayer>
class BasicWebSocketChannel final : public WebSocket {
 public:
  BasicWebSocketChannel(NextLayer stream, const WebSocketOptions& options, ChannelEnd end)
      : ws_(std::move(stream)), end_(std::move(end)) {
    websocket::stream_base::timeout timeout{};
    timeout.handshake_timeout = std::chrono::seconds(10);
    timeout.idle_timeout = options.idle_timeout;
    timeout.keep_alive_pings = true;
    ws_.set_option(timeout);
    ws_.read_message_max(options.max_message_bytes);
    ws_.text(true);
  }
  ~BasicWebSocketChannel() override = default;

  websocket::stream<NextLayer>& ws() { return ws_; }
  asio::any_io_executor strand() { return ws_.get_executor(); }

  // Runs `start(done)` on the strand and blocks until `done(ec, ...)`.
  // When the owner starts stopping the socket is closed (the operation then
  // completes with an error); once the I/O is gone, gives up at once.
  template <typename Start>
  beast::error_code Run(Start start) {
    auto promise = std::make_shared<std::promise<beast::error_code>>();
    std::future<beast::error_code> result = promise->get_future();
    asio::post(strand(), [start = std::move(start), promise]() mutable {
      start([promise](beast::error_code ec, auto&&...) { promise->set_value(ec); });
    });
    bool closing = false;
    while (result.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
      if (end_.io_gone()) return asio::error::operation_aborted;
      if (!closing && end_.stopping()) {
        closing = true;
        Close();
      }
    }
    return result.get();
  }

  absl::StatusOr<std::string> Read() override {
    absl::MutexLock lock(&read_mu_);
    auto buffer = std::make_shared<beast::flat_buffer>();
    beast::error_code ec = Run([this, buffer](auto done) {
      ws_.async_read(*buffer, [buffer, done](auto e, auto n) { done(e, n); });
    });
    if (ec == websocket::error::message_too_big) {
      Close();
      return absl::ResourceExhaustedError("websocket message past the size limit");
    }
    if (ec) return absl::UnavailableError("websocket ended: " + ec.message());
    return beast::buffers_to_string(buffer->data());
  }

  bool Write(std::string_view message) override {
    absl::MutexLock lock(&write_mu_);
    auto data = std::make_shared<std::string>(message);
    beast::error_code ec = Run([this, data](auto done) {
      ws_.async_write(asio::buffer(*data), [data, done](auto e, auto n) { done(e, n); });
    });
    return !ec;
  }

  // Shuts the socket on the strand and waits for that, so no posted work
  // outlives the channel.
  void Close() override {
    if (end_.io_gone()) return;  // nothing runs on the strand any more
    auto promise = std::make_shared<std::promise<void>>();
    std::future<void> closed = promise->get_future();
    asio::post(strand(), [this, promise] {
      beast::error_code ignored;
      beast::get_lowest_layer(ws_).socket().shutdown(tcp::socket::shutdown_both, ignored);
      beast::get_lowest_layer(ws_).socket().close(ignored);
      promise->set_value();
    });
    while (closed.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
      if (end_.io_gone()) return;
    }
  }

 private:
  websocket::stream<NextLayer> ws_;
  ChannelEnd end_;
  absl::Mutex read_mu_;
  absl::Mutex write_mu_;
};

using WebSocketChannel = BasicWebSocketChannel<beast::tcp_stream>;
using TlsWebSocketChannel = BasicWebSocketChannel<TlsStream>;

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_WEBSOCKET_CHANNEL_H_
