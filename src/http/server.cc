#include "http/server.h"

// Theory of operation.
//
// Threads: `io_threads` threads run one io_context. Each connection is a
// coroutine on its own strand: read a request, hand it to the HandlerPool (a
// thread per in-flight handler), suspend until the handler thread posts the
// coroutine's resumption back to the strand, write the response, loop for
// keep-alive. A handler may block for minutes; only its own connection waits.
//
// Streaming: for a Response with `stream`, the handler thread itself drives
// the writes. Each write is posted to the connection's strand and the thread
// blocks until it completes. The coroutine stays suspended meanwhile, so the
// socket is only ever touched on its strand.
//
// Lifetimes: a handler thread may outlive Stop() (a handler past the grace
// cannot be interrupted). Its ticket owns a reference to the io_context, so
// the context, the strand and the suspended coroutine stay valid until that
// thread lets go; once the I/O threads are joined, posted work never runs and
// blocked stream writes give up (Shared::io_stopped).

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <set>
#include <thread>
#include <typeinfo>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/api_error.h"
#include "base/log.h"
#include "http/beast_private.h"
#include "http/handler_pool.h"
#include "http/problem.h"
#include "http/server_framing.h"

namespace aevatar::http {
namespace {

constexpr auto kWriteTimeout = std::chrono::seconds(60);  // peer must take each write
constexpr auto kLingerTimeout = std::chrono::seconds(2);  // drain before an error close
constexpr auto kIdleThreadTimeout = std::chrono::seconds(60);
constexpr size_t kMaxLingerBytes = 64 << 20;
constexpr uint32_t kMaxHeaderBytes = 32 << 10;  // room for bearer and delegation tokens

// State shared by the listener, the connections and the handler threads.
struct Shared {
  ServerOptions options;
  Handler handler;
  std::shared_ptr<HandlerPool> pool;
  std::atomic<bool> stopping{false};    // Stop() began: no new exchanges
  std::atomic<bool> io_stopped{false};  // I/O threads joined: strand work never runs
  std::mutex mu;
  std::condition_variable idle_cv;        // in_flight reached 0
  int in_flight ABSL_GUARDED_BY(mu) = 0;  // requests dispatched and not yet answered
  std::set<beast::tcp_stream*> streams ABSL_GUARDED_BY(mu);  // open connections
};

// What a handler thread needs; the io_context is first so it is released last.
struct Ticket {
  std::shared_ptr<asio::io_context> ioc;
  asio::any_io_executor strand;
  std::shared_ptr<Shared> shared;
  std::shared_ptr<Exchange> exchange;
  std::function<void()> resume;  // resumes the connection's coroutine
};

// Counts one request from dispatch until its response is written (or the
// connection dies), so Stop() can wait for in-flight work.
class InFlight {
 public:
  explicit InFlight(Shared& shared) : shared_(shared) {
    std::lock_guard lock(shared_.mu);
    ++shared_.in_flight;
  }
  ~InFlight() {
    std::lock_guard lock(shared_.mu);
    if (--shared_.in_flight == 0) shared_.idle_cv.notify_all();
  }

 private:
  Shared& shared_;
};

// Registers an open connection so Stop() can close it.
class Registration {
 public:
  Registration(Shared& shared, beast::tcp_stream* stream) : shared_(shared), stream_(stream) {
    std::lock_guard lock(shared_.mu);
    shared_.streams.insert(stream_);
  }
  ~Registration() {
    std::lock_guard lock(shared_.mu);
    shared_.streams.erase(stream_);
  }

 private:
  Shared& shared_;
  beast::tcp_stream* stream_;
};

// Runs the handler; an exception becomes a 500 problem and one log line.
Response CallHandler(const Handler& handler, Request& request) {
  const char* type = "unknown";
  try {
    return handler(request);
  } catch (const std::exception& e) {
    type = typeid(e).name();  // the message may quote request data: log the type only
  } catch (...) {
  }
  std::string diagnostic_id = NewDiagnosticId();
  base::Log(base::LogLevel::kError, "http_handler_threw", diagnostic_id,
            {{"method", request.method}, {"exception", type}});
  return ProblemResponse(
      base::ApiError(absl::StatusCode::kInternal, "INTERNAL", "the request handler failed"),
      diagnostic_id);
}

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
void StreamOnHandlerThread(const Ticket& ticket) {
  Exchange& ex = *ticket.exchange;
  beast::tcp_stream* stream = ex.stream;
  auto header = std::make_shared<bhttp::response<bhttp::empty_body>>(
      BuildStreamHeader(ex.response, ex.keep_alive));
  auto serializer = std::make_shared<bhttp::response_serializer<bhttp::empty_body>>(*header);
  ex.streamed = true;
  bool ok = RunOnStrand(ticket, [stream, header, serializer](auto done) {
    stream->expires_after(kWriteTimeout);
    bhttp::async_write_header(*stream, *serializer,
                              [header, serializer, done](auto ec, auto n) { done(ec, n); });
  });
  if (ok && !ex.head && !StatusHasNoBody(ex.response.status)) {
    ChunkWriter writer = [&](std::string_view chunk) {
      if (!ok) return false;
      if (chunk.empty()) return true;  // an empty chunk would end the body early
      auto data = std::make_shared<std::string>(chunk);
      ok = RunOnStrand(ticket, [stream, data](auto done) {
        stream->expires_after(kWriteTimeout);
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
        stream->expires_after(kWriteTimeout);
        asio::async_write(*stream, bhttp::make_chunk_last(), done);
      });
    }
  }
  ex.stream_ok = ok;
}

// The handler thread's whole job for one request.
void RunExchange(Ticket& ticket) {
  Exchange& ex = *ticket.exchange;
  ex.response = CallHandler(ticket.shared->handler, ex.request);
  if (ex.response.stream) StreamOnHandlerThread(ticket);
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

asio::awaitable<bool> WriteResponse(beast::tcp_stream& stream, const Response& response,
                                    bool keep_alive, bool head) {
  bhttp::response<bhttp::string_body> message = BuildResponse(response, keep_alive, head);
  beast::error_code ec;
  stream.expires_after(kWriteTimeout);
  co_await bhttp::async_write(stream, message, NoThrow(ec));
  co_return !ec;
}

// Ends a connection after an error answer: stop sending, then read and drop
// what the peer is still sending (bounded), so the close does not turn into a
// reset that destroys our answer before the peer reads it.
asio::awaitable<void> LingeringClose(beast::tcp_stream& stream) {
  beast::error_code ec;
  stream.socket().shutdown(tcp::socket::shutdown_send, ec);
  stream.expires_after(kLingerTimeout);
  std::vector<char> sink(16 << 10);
  size_t drained = 0;
  while (!ec && drained < kMaxLingerBytes) {
    drained += co_await stream.async_read_some(asio::buffer(sink), NoThrow(ec));
  }
  stream.socket().close(ec);
}

asio::awaitable<void> Session(std::shared_ptr<Shared> shared, std::weak_ptr<asio::io_context> ioc,
                              tcp::socket socket) {
  beast::tcp_stream stream(std::move(socket));
  Registration registration(*shared, &stream);
  beast::error_code ec;
  std::string remote = stream.socket().remote_endpoint(ec).address().to_string();
  beast::flat_buffer buffer;
  const auto read_timeout = std::chrono::seconds(shared->options.read_timeout_secs);
  while (!shared->stopping) {
    bhttp::request_parser<bhttp::string_body> parser;
    parser.body_limit(shared->options.max_body_bytes);
    parser.header_limit(kMaxHeaderBytes);
    stream.expires_after(read_timeout);
    co_await bhttp::async_read_header(stream, buffer, parser, NoThrow(ec));
    if (!ec && beast::iequals(parser.get()[bhttp::field::expect], "100-continue")) {
      // curl and others wait for this before sending a body.
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      co_await asio::async_write(stream, asio::buffer(kContinue), NoThrow(ec));
    }
    if (!ec) co_await bhttp::async_read(stream, buffer, parser, NoThrow(ec));
    if (ec) {
      if (std::optional<Response> problem = ProblemForReadError(ec, shared->options)) {
        if (co_await WriteResponse(stream, *problem, /*keep_alive=*/false, /*head=*/false)) {
          co_await LingeringClose(stream);
        }
      }
      co_return;
    }
    InFlight in_flight(*shared);
    auto exchange = std::make_shared<Exchange>();
    exchange->request = ToRequest(parser.release(), remote);
    exchange->head = exchange->request.method == "HEAD";
    exchange->keep_alive = parser.keep_alive();
    exchange->stream = &stream;
    if (shared->stopping) {
      exchange->response = StoppingResponse();
      exchange->keep_alive = false;
    } else {
      auto executor = stream.get_executor();
      co_await asio::async_initiate<decltype(asio::use_awaitable), void()>(
          [&](auto completion) {
            Dispatch(shared, ioc.lock(), executor, exchange, std::move(completion));
          },
          asio::use_awaitable);
    }
    if (exchange->busy) exchange->response = BusyResponse();
    if (exchange->streamed) {
      if (!exchange->stream_ok) co_return;
    } else if (!co_await WriteResponse(stream, exchange->response, exchange->keep_alive,
                                       exchange->head)) {
      co_return;
    }
    if (!exchange->keep_alive || WantsClose(exchange->response)) break;
  }
  stream.socket().shutdown(tcp::socket::shutdown_send, ec);
  stream.socket().close(ec);
}

asio::awaitable<void> AcceptLoop(std::shared_ptr<Shared> shared,
                                 std::weak_ptr<asio::io_context> ioc_weak,
                                 std::shared_ptr<tcp::acceptor> acceptor) {
  while (!shared->stopping) {
    std::shared_ptr<asio::io_context> ioc = ioc_weak.lock();
    if (!ioc) co_return;
    tcp::socket socket(asio::make_strand(*ioc));
    ioc.reset();  // the coroutine must not keep its own io_context alive
    beast::error_code ec;
    co_await acceptor->async_accept(socket, NoThrow(ec));
    if (ec == asio::error::operation_aborted || !acceptor->is_open()) co_return;
    if (ec) {
      // Out of descriptors or similar: back off instead of spinning.
      asio::steady_timer pause(acceptor->get_executor(), std::chrono::milliseconds(100));
      co_await pause.async_wait(NoThrow(ec));
      continue;
    }
    socket.set_option(tcp::no_delay(true), ec);
    auto executor = socket.get_executor();
    asio::co_spawn(executor, Session(shared, ioc_weak, std::move(socket)), asio::detached);
  }
}

class ServerImpl final : public Server {
 public:
  ServerImpl(const ServerOptions& options, Handler handler)
      : shared_(std::make_shared<Shared>()),
        ioc_(std::make_shared<asio::io_context>(std::max(1, options.io_threads))),
        work_(asio::make_work_guard(*ioc_)) {
    shared_->options = options;
    shared_->handler = std::move(handler);
    shared_->pool =
        std::make_shared<HandlerPool>(options.max_concurrent_handlers, kIdleThreadTimeout);
  }
  ~ServerImpl() override { Stop(0); }

  absl::Status Listen() {
    beast::error_code ec;
    const ServerOptions& options = shared_->options;
    std::string host = options.host == "localhost" ? "127.0.0.1" : options.host;
    asio::ip::address address = asio::ip::make_address(host, ec);
    if (ec) return absl::InvalidArgumentError(absl::StrCat("bad listen address ", options.host));
    tcp::endpoint endpoint(address, options.port);
    std::string where = absl::StrCat(options.host, ":", options.port);
    acceptor_ = std::make_shared<tcp::acceptor>(asio::make_strand(*ioc_));
    acceptor_->open(endpoint.protocol(), ec);
    if (!ec) acceptor_->set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_->bind(endpoint, ec);
    if (!ec) acceptor_->listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return absl::UnavailableError(absl::StrCat("listen on ", where, ": ", ec.message()));
    port_ = acceptor_->local_endpoint(ec).port();
    asio::co_spawn(acceptor_->get_executor(), AcceptLoop(shared_, ioc_, acceptor_), asio::detached);
    for (int i = 0; i < std::max(1, options.io_threads); ++i) {
      io_threads_.emplace_back([ioc = ioc_] { RunIo(*ioc); });
    }
    return absl::OkStatus();
  }

  uint16_t port() const override { return port_; }

  void Stop(int grace_secs) override {
    std::lock_guard stop_lock(stop_mu_);
    if (stopped_) return;
    stopped_ = true;
    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(std::max(0, grace_secs));
    shared_->stopping = true;
    if (acceptor_ && io_threads_.empty()) {
      beast::error_code ec;
      acceptor_->close(ec);  // Listen() failed before any I/O thread started
    } else if (acceptor_) {
      // The acceptor lives on its strand; close it there.
      std::promise<void> closed;
      asio::post(acceptor_->get_executor(), [this, &closed] {
        beast::error_code ec;
        acceptor_->close(ec);
        closed.set_value();
      });
      closed.get_future().wait();
    }
    {
      std::unique_lock lock(shared_->mu);
      shared_->idle_cv.wait_until(lock, deadline, [&] { return shared_->in_flight == 0; });
    }
    work_.reset();
    ioc_->stop();
    for (auto& thread : io_threads_) thread.join();
    io_threads_.clear();
    shared_->io_stopped = true;
    {
      // No I/O thread runs now, so closing here races with nothing. The
      // coroutine frames stay until the io_context is destroyed.
      std::lock_guard lock(shared_->mu);
      beast::error_code ec;
      for (beast::tcp_stream* stream : shared_->streams) stream->socket().close(ec);
    }
    shared_->pool->Shutdown(deadline);
  }

 private:
  static void RunIo(asio::io_context& ioc) {
    while (true) {
      try {
        ioc.run();
        return;
      } catch (const std::exception& e) {
        // A failure inside one connection must not take the I/O thread down.
        base::Log(base::LogLevel::kError, "http_io_exception", "",
                  {{"exception", typeid(e).name()}});
      }
    }
  }

  std::shared_ptr<Shared> shared_;
  std::shared_ptr<asio::io_context> ioc_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::shared_ptr<tcp::acceptor> acceptor_;
  std::vector<std::thread> io_threads_;
  uint16_t port_ = 0;
  std::mutex stop_mu_;
  bool stopped_ = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Server>> Server::Start(const ServerOptions& options,
                                                      Handler handler) {
  if (!handler) return absl::InvalidArgumentError("server needs a handler");
  if (options.io_threads < 1 || options.max_concurrent_handlers < 1 ||
      options.read_timeout_secs < 1) {
    return absl::InvalidArgumentError(
        "io_threads, max_concurrent_handlers and read_timeout_secs must be positive");
  }
  auto server = std::make_unique<ServerImpl>(options, std::move(handler));
  if (absl::Status status = server->Listen(); !status.ok()) return status;
  return server;
}

}  // namespace aevatar::http
