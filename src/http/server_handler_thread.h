#ifndef AEVATAR_HTTP_SERVER_HANDLER_THREAD_H_
#define AEVATAR_HTTP_SERVER_HANDLER_THREAD_H_

// Private to src/http, included by server.cc only: the handler-thread side of
// an exchange. Dispatch hands a parsed request to the HandlerPool; the pool
// thread runs the handler and, for a streamed Response, drives the writes
// itself: each write is posted to the connection's strand and the thread
// blocks until it completes, while the connection's coroutine stays
// suspended, so the socket is only ever touched on its strand. The thread
// then posts the coroutine's resumption back to the strand.

#include <functional>
#include <future>
#include <memory>
#include <string>
#include <typeinfo>

#include "base/api_error.h"
#include "base/log.h"
#include "http/beast_private.h"
#include "http/problem.h"
#include "http/server_common.h"
#include "http/server_framing.h"
#include "http/server_state.h"
#include "http/websocket_channel.h"

namespace aevatar::http {

// What a handler thread needs; the io_context is first so it is released last.
struct Ticket {
  std::shared_ptr<asio::io_context> ioc;
  asio::any_io_executor strand;
  std::shared_ptr<Shared> shared;
  std::shared_ptr<Exchange> exchange;
  std::function<void()> resume;  // resumes the connection's coroutine
};

// Runs `start(done)` on the connection's strand and blocks this (handler)
// thread until `done(ec, bytes)` is called. Returns false on a write error, or
// once the I/O threads are gone and the write can never finish.
template <typename Start>
bool RunOnStrand(const Ticket& ticket, Start start) {
  auto promise = std::make_shared<std::promise<bool>>();
  std::future<bool> result = promise->get_future();
  asio::post(ticket.strand, [start = std::move(start), promise]() mutable {
    start([promise](beast::error_code ec, std::size_t) { promise->set_value(!ec); });
  });
  while (result.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
    if (ticket.shared->io_stopped) return false;
  }
  return result.get();
}

// Sends a streamed response from the handler thread: headers with chunked
// encoding, one chunk per writer call, then the last chunk.
template <class Stream>
void StreamOnHandlerThread(const Ticket& ticket, Stream* stream) {
  Exchange& ex = *ticket.exchange;
  auto header = std::make_shared<bhttp::response<bhttp::empty_body>>(
      BuildStreamHeader(ex.response, ex.keep_alive));
  auto serializer = std::make_shared<bhttp::response_serializer<bhttp::empty_body>>(*header);
  ex.streamed = true;
  bool ok = RunOnStrand(ticket, [stream, header, serializer](auto done) {
    beast::get_lowest_layer(*stream).expires_after(kWriteTimeout);
    bhttp::async_write_header(*stream, *serializer,
                              [header, serializer, done](auto ec, auto n) { done(ec, n); });
  });
  if (ok && !ex.head && !StatusHasNoBody(ex.response.status)) {
    ChunkWriter writer = [&](std::string_view chunk) {
      if (!ok) return false;
      if (chunk.empty()) return true;  // an empty chunk would end the body early
      auto data = std::make_shared<std::string>(chunk);
      ok = RunOnStrand(ticket, [stream, data](auto done) {
        beast::get_lowest_layer(*stream).expires_after(kWriteTimeout);
        asio::async_write(*stream, bhttp::make_chunk(asio::buffer(*data)),
                          [data, done](auto ec, auto n) { done(ec, n); });
      });
      return ok;
    };
    try {
      ex.response.stream(writer);
    } catch (...) {
      ok = false;  // headers are out: the only honest signal left is a cut connection
    }
    if (ok) {
      ok = RunOnStrand(ticket, [stream](auto done) {
        beast::get_lowest_layer(*stream).expires_after(kWriteTimeout);
        asio::async_write(*stream, bhttp::make_chunk_last(), done);
      });
    }
  }
  ex.stream_ok = ok;
}

// Runs `work` on the connection's strand and waits; false once the I/O is gone.
template <typename Work>
bool OnStrand(const Ticket& ticket, Work work) {
  return RunOnStrand(ticket, [work = std::move(work)](auto done) mutable {
    work();
    done(beast::error_code(), 0);
  });
}

// What a WebSocket session takes from the connection: the socket of a plain
// one, the whole TLS stream (its session state) of a TLS one.
inline beast::tcp_stream TakeConnection(beast::tcp_stream* stream) {
  return beast::tcp_stream(stream->release_socket());
}
inline TlsStream TakeConnection(TlsStream* stream) { return std::move(*stream); }

// Turns the connection into a WebSocket and runs the handler's session on
// this thread. The connection leaves its coroutine (which then ends without
// touching it) for the channel, which this thread owns and destroys on the
// strand, where its timers run.
template <class Stream>
void WebSocketOnHandlerThread(const Ticket& ticket, Stream* stream) {
  Exchange& ex = *ticket.exchange;
  const WebSocketUpgradeSpec& spec = *ex.response.websocket;
  ex.streamed = true;  // the connection is the session's now and ends with it
  ex.stream_ok = false;
  ex.handed_off = true;
  std::shared_ptr<Shared> shared = ticket.shared;
  ChannelEnd end{[shared] { return shared->stopping.load(); },
                 [shared] { return shared->io_stopped.load(); }};
  std::unique_ptr<BasicWebSocketChannel<Stream>> channel;
  if (!OnStrand(ticket, [&] {
        beast::get_lowest_layer(*stream).expires_never();
        ex.registration->Release();
        channel = std::make_unique<BasicWebSocketChannel<Stream>>(TakeConnection(stream),
                                                                  spec.options, end);
      })) {
    return;
  }
  bhttp::request<bhttp::empty_body> upgrade;
  upgrade.method_string(ex.request.method);
  upgrade.target(ex.request.target);
  upgrade.version(11);
  for (const auto& [name, value] : ex.request.headers.fields()) upgrade.insert(name, value);
  beast::error_code ec = channel->Run(
      [&](auto done) { channel->ws().async_accept(upgrade, [done](auto e) { done(e, 0); }); });
  if (!ec) spec.session(*channel);
  channel->Close();
  if (shared->io_stopped) return;  // nothing runs on the strand: destroy it here
  asio::post(ticket.strand,
             [owned = std::shared_ptr<BasicWebSocketChannel<Stream>>(std::move(channel))] {});
}

// The handler thread's whole job for one request.
inline void RunExchange(Ticket& ticket) {
  Exchange& ex = *ticket.exchange;
  ex.response = CallHandler(ticket.shared->handler, ex.request);
  if (ex.response.websocket && !ex.head && IsWebSocketUpgrade(ex.request)) {
    std::visit([&](auto* stream) { WebSocketOnHandlerThread(ticket, stream); }, ex.stream);
  } else if (ex.response.websocket) {
    ex.response = WebSocketRequiredResponse();
  } else if (ex.response.stream) {
    std::visit([&](auto* stream) { StreamOnHandlerThread(ticket, stream); }, ex.stream);
  }
  asio::post(ticket.strand, std::move(ticket.resume));
}

// Hands `exchange` to a handler thread; `completion` resumes the coroutine on
// its strand when the handler is done (or at once when the pool is full).
template <typename Completion>
void Dispatch(const std::shared_ptr<Shared>& shared, std::shared_ptr<asio::io_context> ioc,
              asio::any_io_executor strand, std::shared_ptr<Exchange> exchange,
              Completion completion) {
  auto handler = std::make_shared<Completion>(std::move(completion));
  std::function<void()> resume = [handler] { std::move (*handler)(); };
  auto ticket = std::make_shared<Ticket>(Ticket{std::move(ioc), strand, shared, exchange, resume});
  if (!shared->pool->TrySubmit([ticket] { RunExchange(*ticket); })) {
    exchange->busy = true;
    asio::post(strand, std::move(resume));
  }
}

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_SERVER_HANDLER_THREAD_H_
