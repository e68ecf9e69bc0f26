#include "http/websocket.h"

// The client side runs its connection on a private io_context with one I/O
// thread of its own (the channel's blocking calls post to its strand), for
// as long as the connection lives.

#include <thread>
#include <type_traits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "http/tls.h"
#include "http/url.h"
#include "http/websocket_channel.h"

namespace aevatar::http {
namespace {

bool HeaderHasToken(const Request& request, std::string_view name, const std::string& token) {
  const std::string value = request.headers.Get(name).value_or("");
  for (absl::string_view part : absl::StrSplit(value, ',')) {
    if (absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(part), token)) return true;
  }
  return false;
}

// A ws:// or wss:// client connection: NextLayer is beast::tcp_stream or
// TlsStream.
template <class NextLayer>
class ClientWebSocket final : public WebSocket {
 public:
  explicit ClientWebSocket(std::shared_ptr<ssl::context> tls)
      : ioc_(std::make_unique<asio::io_context>(1)),
        work_(asio::make_work_guard(*ioc_)),
        tls_(std::move(tls)) {}

  ~ClientWebSocket() override {
    if (channel_) channel_->Close();
    // The channel goes on the strand, where its timers run; then the thread.
    asio::post(ioc_->get_executor(),
               [owned = std::shared_ptr<BasicWebSocketChannel<NextLayer>>(std::move(channel_))] {});
    work_.reset();
    ioc_->stop();
    if (thread_.joinable()) thread_.join();
  }

  absl::Status Connect(const HttpUrl& url, const Headers& headers,
                       std::chrono::milliseconds timeout, const WebSocketOptions& options) {
    channel_ =
        std::make_unique<BasicWebSocketChannel<NextLayer>>(MakeLayer(), options, ChannelEnd{});
    thread_ = std::thread([ioc = ioc_.get()] { ioc->run(); });
    const std::string where = absl::StrCat(url.host, ":", url.port);
    auto resolver = std::make_shared<tcp::resolver>(channel_->strand());
    auto endpoints = std::make_shared<tcp::resolver::results_type>();
    beast::error_code ec = channel_->Run([&](auto done) {
      // The resolver cannot be timed by the stream; the whole connect is
      // bounded below by the stream's timer, and the lookup of an IP literal
      // or a hosts-file name returns at once.
      resolver->async_resolve(url.host, std::to_string(url.port),
                              [resolver, endpoints, done](auto e, auto results) {
                                *endpoints = results;
                                done(e, 0);
                              });
    });
    if (ec) return absl::UnavailableError(absl::StrCat("resolve ", where, ": ", ec.message()));
    auto& ws = channel_->ws();
    ec = channel_->Run([&](auto done) {
      beast::get_lowest_layer(ws).expires_after(timeout);
      beast::get_lowest_layer(ws).async_connect(*endpoints, [done](auto e, auto) { done(e, 0); });
    });
    if (ec == beast::error::timeout) {
      return absl::DeadlineExceededError(absl::StrCat("connect to ", where, " timed out"));
    }
    if (ec) return absl::UnavailableError(absl::StrCat("connect to ", where, ": ", ec.message()));
    if constexpr (std::is_same_v<NextLayer, TlsStream>) {
      if (absl::Status st = PrepareTlsStream(ws.next_layer(), url.host); !st.ok()) return st;
      ec = channel_->Run([&](auto done) {
        ws.next_layer().async_handshake(ssl::stream_base::client, [done](auto e) { done(e, 0); });
      });
      if (ec == beast::error::timeout) {
        return absl::DeadlineExceededError(
            absl::StrCat("TLS handshake with ", where, " timed out"));
      }
      if (ec) return TlsHandshakeError(ws.next_layer(), ec, where);
    }
    beast::get_lowest_layer(ws).expires_never();  // the websocket's own timeouts from here
    ws.set_option(websocket::stream_base::decorator([headers](websocket::request_type& request) {
      for (const auto& [name, value] : headers.fields()) {
        if (!UnsafeHeaderText(name) && !UnsafeHeaderText(value)) request.set(name, value);
      }
    }));
    auto answer = std::make_shared<websocket::response_type>();
    ec = channel_->Run([&](auto done) {
      ws.async_handshake(*answer, url.HostHeader(), url.target,
                         [answer, done](auto e) { done(e, 0); });
    });
    if (ec == websocket::error::upgrade_declined) {
      return absl::UnavailableError(absl::StrCat(
          "the server at ", where, " declined the WebSocket upgrade with ", answer->result_int()));
    }
    if (ec == beast::error::timeout) {
      return absl::DeadlineExceededError(
          absl::StrCat("WebSocket upgrade at ", where, " timed out"));
    }
    if (ec)
      return absl::UnavailableError(
          absl::StrCat("WebSocket upgrade at ", where, ": ", ec.message()));
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> Read() override { return channel_->Read(); }
  bool Write(std::string_view message) override { return channel_->Write(message); }
  void Close() override { channel_->Close(); }

 private:
  NextLayer MakeLayer() {
    if constexpr (std::is_same_v<NextLayer, TlsStream>) {
      return TlsStream(beast::tcp_stream(asio::make_strand(*ioc_)), *tls_);
    } else {
      return beast::tcp_stream(asio::make_strand(*ioc_));
    }
  }

  std::unique_ptr<asio::io_context> ioc_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::shared_ptr<ssl::context> tls_;  // wss:// only
  std::thread thread_;
  std::unique_ptr<BasicWebSocketChannel<NextLayer>> channel_;
};

template <class NextLayer>
absl::StatusOr<std::unique_ptr<WebSocket>> Open(const HttpUrl& url, const Headers& headers,
                                                std::chrono::milliseconds timeout,
                                                const WebSocketOptions& options,
                                                std::shared_ptr<ssl::context> tls) {
  auto socket = std::make_unique<ClientWebSocket<NextLayer>>(std::move(tls));
  if (absl::Status st = socket->Connect(url, headers, timeout, options); !st.ok()) return st;
  return socket;
}

}  // namespace

bool IsWebSocketUpgrade(const Request& request) {
  return request.method == "GET" && HeaderHasToken(request, "Connection", "upgrade") &&
         HeaderHasToken(request, "Upgrade", "websocket");
}

Response WebSocketUpgrade(WebSocketSession session, WebSocketOptions options) {
  Response response;
  response.status = 101;
  response.websocket = std::make_shared<const WebSocketUpgradeSpec>(
      WebSocketUpgradeSpec{std::move(session), options});
  return response;
}

absl::StatusOr<std::unique_ptr<WebSocket>> ConnectWebSocket(
    const std::string& url, const Headers& headers, std::chrono::milliseconds connect_timeout,
    WebSocketOptions options, const ClientTls& tls) {
  // ws:// and wss:// are http:// and https:// with an upgrade.
  std::string http_url;
  if (absl::StartsWithIgnoreCase(url, "ws://")) {
    http_url = "http://" + url.substr(5);
  } else if (absl::StartsWithIgnoreCase(url, "wss://")) {
    http_url = "https://" + url.substr(6);
  } else {
    return absl::InvalidArgumentError("a WebSocket URL must start with ws:// or wss://");
  }
  auto parsed = ParseHttpUrl(http_url);
  if (!parsed.ok()) return parsed.status();
  if (!parsed->tls) {
    return Open<beast::tcp_stream>(*parsed, headers, connect_timeout, options, nullptr);
  }
  auto context = SharedClientTlsContext(tls);
  if (!context.ok()) return context.status();
  return Open<TlsStream>(*parsed, headers, connect_timeout, options, std::move(*context));
}

}  // namespace aevatar::http
