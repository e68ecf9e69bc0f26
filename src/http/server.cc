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
// the writes (server_handler_thread.h).
//
// Limits (see ServerOptions): the accept loop takes a ConnectionLimit slot
// per connection or sheds it (503, short linger, close). A session waits for
// a kept-alive request's first byte under the idle timeout, then reads the
// header under the header deadline and the body under the body deadline; the
// tcp_stream's timer closes the socket when one passes. A 413/414/431 is
// written before the rest of the request is read, then the connection is
// drained (bounded) and closed.
//
// Lifetimes: a handler thread may outlive Stop() (a handler past the grace
// cannot be interrupted). Its ticket owns a reference to the io_context, so
// the context, the strand and the suspended coroutine stay valid until that
// thread lets go; once the I/O threads are joined, posted work never runs and
// blocked stream writes give up (Shared::io_stopped).

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <thread>
#include <typeinfo>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/log.h"
#include "http/beast_private.h"
#include "http/connection_limit.h"
#include "http/handler_pool.h"
#include "http/in_process.h"
#include "http/server_framing.h"
#include "http/server_handler_thread.h"
#include "http/server_state.h"
#include "os/unique_fd.h"

namespace aevatar::http {
namespace {

using Duration = std::chrono::steady_clock::duration;

constexpr Duration kLingerTimeout = std::chrono::seconds(2);       // drain before an error close
constexpr Duration kShedTimeout = std::chrono::milliseconds(500);  // write and drain a shed 503
constexpr auto kIdleThreadTimeout = std::chrono::seconds(60);
constexpr size_t kMaxLingerBytes = 64 << 20;
constexpr int kMaxShedding = 64;               // past this, shed connections are just closed
constexpr size_t kFirstReadBytes = 4 << 10;    // first read of a kept-alive request
constexpr size_t kIdleBufferBytes = 16 << 10;  // an idle connection keeps at most this buffer
constexpr Duration kTlsShutdownTimeout = std::chrono::seconds(2);  // the peer's close_notify

template <class Stream>
asio::awaitable<bool> WriteResponse(Stream& stream, const Response& response, bool keep_alive,
                                    bool head, Duration timeout = kWriteTimeout) {
  bhttp::response<bhttp::string_body> message = BuildResponse(response, keep_alive, head);
  beast::error_code ec;
  beast::get_lowest_layer(stream).expires_after(timeout);
  co_await bhttp::async_write(stream, message, NoThrow(ec));
  co_return !ec;
}

// Ends a connection after an error answer: stop sending, then read and drop
// what the peer is still sending (bounded), so the close does not turn into a
// reset that destroys our answer before the peer reads it. Works below TLS:
// the drained bytes are never decrypted.
asio::awaitable<void> LingeringClose(beast::tcp_stream& stream, Duration timeout = kLingerTimeout) {
  beast::error_code ec;
  stream.socket().shutdown(tcp::socket::shutdown_send, ec);
  stream.expires_after(timeout);
  std::vector<char> sink(16 << 10);
  size_t drained = 0;
  while (!ec && drained < kMaxLingerBytes) {
    drained += co_await stream.async_read_some(asio::buffer(sink), NoThrow(ec));
  }
  stream.socket().close(ec);
}

// Waits up to `timeout` for the first bytes of a kept-alive connection's next
// request and leaves them in `buffer`. Returns false when the peer closed or
// stayed silent.
template <class Stream>
asio::awaitable<bool> AwaitNextRequest(Stream& stream, beast::flat_buffer& buffer,
                                       Duration timeout) {
  if (buffer.capacity() > kIdleBufferBytes) buffer.shrink_to_fit();  // buffer is empty here
  beast::error_code ec;
  beast::get_lowest_layer(stream).expires_after(timeout);
  size_t n = co_await stream.async_read_some(buffer.prepare(kFirstReadBytes), NoThrow(ec));
  buffer.commit(n);
  co_return !ec;
}

// Serves a connection's requests until it ends. Returns false when the
// connection is no longer the caller's to close (a WebSocket session took it).
template <class Stream>
asio::awaitable<bool> Serve(std::shared_ptr<Shared> shared, std::weak_ptr<asio::io_context> ioc,
                            Stream& stream, Registration& registration) {
  beast::tcp_stream& tcp = beast::get_lowest_layer(stream);
  beast::error_code ec;
  std::string remote = tcp.socket().remote_endpoint(ec).address().to_string();
  beast::flat_buffer buffer;
  const ServerOptions& options = shared->options;
  for (bool first = true; !shared->stopping; first = false) {
    // The first request's header deadline runs from the accept; a kept-alive
    // connection first waits (idle timeout) for the next request to begin.
    if (!first && buffer.size() == 0 &&
        !co_await AwaitNextRequest(stream, buffer, options.idle_timeout)) {
      break;
    }
    bhttp::request_parser<RequestBody> parser;
    parser.body_limit(options.max_body_bytes);
    parser.header_limit(
        static_cast<uint32_t>(std::min<size_t>(options.max_header_bytes, 1u << 30)));
    tcp.expires_after(options.header_timeout);
    co_await bhttp::async_read_header(stream, buffer, parser, NoThrow(ec));
    if (!ec) {
      if (std::optional<Response> problem = FramingProblem(parser.get())) {
        if (co_await WriteResponse(stream, *problem, /*keep_alive=*/false, /*head=*/false)) {
          co_await LingeringClose(tcp);
        }
        co_return true;
      }
    }
    if (!ec && beast::iequals(parser.get()[bhttp::field::expect], "100-continue")) {
      // curl and others wait for this before sending a body.
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      co_await asio::async_write(stream, asio::buffer(kContinue), NoThrow(ec));
    }
    if (!ec && !parser.is_done()) {
      tcp.expires_after(options.body_timeout);
      co_await bhttp::async_read(stream, buffer, parser, NoThrow(ec));
    }
    if (ec) {
      bool request_line_read = !parser.get().target().empty();
      if (std::optional<Response> problem = ProblemForReadError(ec, options, request_line_read)) {
        if (co_await WriteResponse(stream, *problem, /*keep_alive=*/false, /*head=*/false)) {
          co_await LingeringClose(tcp);
        }
      }
      co_return true;
    }
    InFlight in_flight(*shared);
    auto exchange = std::make_shared<Exchange>();
    exchange->request = ToRequest(parser.release(), remote);
    exchange->head = exchange->request.method == "HEAD";
    exchange->keep_alive = parser.keep_alive();
    exchange->stream = &stream;
    exchange->registration = &registration;
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
    if (exchange->handed_off) co_return false;
    if (exchange->streamed) {
      if (!exchange->stream_ok) co_return true;
    } else if (!co_await WriteResponse(stream, exchange->response, exchange->keep_alive,
                                       exchange->head)) {
      co_return true;
    }
    if (!exchange->keep_alive || WantsClose(exchange->response)) break;
  }
  co_return true;
}

asio::awaitable<void> PlainSession(std::shared_ptr<Shared> shared,
                                   std::weak_ptr<asio::io_context> ioc, tcp::socket socket,
                                   ConnectionLimit::Slot slot) {
  ConnectionLimit::Slot held = std::move(slot);  // a local: released before `shared`
  beast::tcp_stream stream(std::move(socket));
  Registration registration(*shared, &stream);
  if (!co_await Serve(shared, ioc, stream, registration)) co_return;
  beast::error_code ec;
  stream.socket().shutdown(tcp::socket::shutdown_send, ec);
  stream.socket().close(ec);
}

// A TLS connection: the handshake (bounded by the header timeout, like a
// request's header), the requests, then close_notify (bounded) and close.
asio::awaitable<void> TlsSession(std::shared_ptr<Shared> shared,
                                 std::weak_ptr<asio::io_context> ioc, tcp::socket socket,
                                 ConnectionLimit::Slot slot) {
  ConnectionLimit::Slot held = std::move(slot);
  TlsStream stream(beast::tcp_stream(std::move(socket)), *shared->tls);
  beast::tcp_stream& tcp = beast::get_lowest_layer(stream);
  Registration registration(*shared, &tcp);
  beast::error_code ec;
  tcp.expires_after(shared->options.header_timeout);
  co_await stream.async_handshake(ssl::stream_base::server, NoThrow(ec));
  if (ec) co_return;  // plaintext, a scanner, an untrusted client certificate: nothing to answer
  if (!co_await Serve(shared, ioc, stream, registration)) co_return;
  tcp.expires_after(kTlsShutdownTimeout);
  co_await stream.async_shutdown(NoThrow(ec));
  tcp.socket().close(ec);
}

// Answers a connection past the cap with 503 and closes it; it holds no slot.
asio::awaitable<void> Shed(std::shared_ptr<Shared> shared, tcp::socket socket) {
  struct Done {
    Shared& shared;
    ~Done() { --shared.shedding; }
  } done{*shared};
  beast::tcp_stream stream(std::move(socket));
  if (co_await WriteResponse(stream, TooManyConnectionsResponse(), /*keep_alive=*/false,
                             /*head=*/false, kShedTimeout)) {
    co_await LingeringClose(stream, kShedTimeout);  // so the peer reads the 503, not a reset
  }
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
    if (std::optional<ConnectionLimit::Slot> slot = shared->limit->TryAcquire()) {
      if (shared->tls) {
        asio::co_spawn(executor, TlsSession(shared, ioc_weak, std::move(socket), std::move(*slot)),
                       asio::detached);
      } else {
        asio::co_spawn(executor,
                       PlainSession(shared, ioc_weak, std::move(socket), std::move(*slot)),
                       asio::detached);
      }
    } else if (!shared->tls && shared->shedding.fetch_add(1) < kMaxShedding) {
      asio::co_spawn(executor, Shed(shared, std::move(socket)), asio::detached);
    } else {
      if (!shared->tls) --shared->shedding;
      socket.close(ec);  // a flood (or TLS): not even a 503
    }
  }
}

class ServerImpl final : public Server {
 public:
  ServerImpl(const ServerOptions& options, Handler handler, std::shared_ptr<ssl::context> tls)
      : shared_(std::make_shared<Shared>()),
        ioc_(std::make_shared<asio::io_context>(std::max(1, options.io_threads))),
        work_(asio::make_work_guard(*ioc_)) {
    shared_->options = options;
    shared_->handler = std::move(handler);
    shared_->tls = std::move(tls);
    shared_->pool =
        std::make_shared<HandlerPool>(options.max_concurrent_handlers, kIdleThreadTimeout);
    shared_->limit = std::make_unique<ConnectionLimit>(options.max_connections);
  }
  ~ServerImpl() override { Stop(0); }

  absl::Status Listen() {
    const ServerOptions& options = shared_->options;
    acceptor_ = std::make_shared<tcp::acceptor>(asio::make_strand(*ioc_));
    absl::Status listening = options.listen_fd >= 0 ? Adopt(options.listen_fd) : BindAndListen();
    if (!listening.ok()) return listening;
    beast::error_code ec;
    port_ = acceptor_->local_endpoint(ec).port();
    asio::co_spawn(acceptor_->get_executor(), AcceptLoop(shared_, ioc_, acceptor_), asio::detached);
    for (int i = 0; i < std::max(1, options.io_threads); ++i) {
      io_threads_.emplace_back([ioc = ioc_] { RunIo(*ioc); });
    }
    if (options.serve_in_process) ServeInProcess();
    return absl::OkStatus();
  }

  // Registers this server for the process's own requests to its address,
  // where that address is one this process's clients reach as bound.
  void ServeInProcess() {
    const ServerOptions& options = shared_->options;
    const std::string host = options.host == "localhost" ? "127.0.0.1" : options.host;
    // Not a given socket (its address may be another namespace's), not TLS,
    // not a wildcard (its callers name another address, and their remote
    // address would not be the one they called), and not from a thread
    // that entered another network namespace.
    if (options.listen_fd >= 0 || shared_->tls || host == "0.0.0.0" || host == "::" ||
        !InProcessNetworkNamespace()) {
      return;
    }
    in_process_ = std::make_shared<InProcessPeer>();
    in_process_->handler = shared_->handler;
    in_process_->pool = shared_->pool;
    in_process_->max_header_bytes = options.max_header_bytes;
    in_process_->max_body_bytes = options.max_body_bytes;
    in_process_host_ = host;
    RegisterInProcessPeer(in_process_host_, port_, in_process_);
  }

  // True when this thread is in the process's own network namespace.
  static bool InProcessNetworkNamespace() {
    struct stat thread_ns {};
    struct stat process_ns {};
    return ::stat("/proc/thread-self/ns/net", &thread_ns) == 0 &&
           ::stat("/proc/self/ns/net", &process_ns) == 0 && thread_ns.st_ino == process_ns.st_ino &&
           thread_ns.st_dev == process_ns.st_dev;
  }

  absl::Status BindAndListen() {
    beast::error_code ec;
    const ServerOptions& options = shared_->options;
    std::string host = options.host == "localhost" ? "127.0.0.1" : options.host;
    asio::ip::address address = asio::ip::make_address(host, ec);
    if (ec) return absl::InvalidArgumentError(absl::StrCat("bad listen address ", options.host));
    tcp::endpoint endpoint(address, options.port);
    acceptor_->open(endpoint.protocol(), ec);
    if (!ec) acceptor_->set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_->bind(endpoint, ec);
    if (!ec) acceptor_->listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      return absl::UnavailableError(
          absl::StrCat("listen on ", options.host, ":", options.port, ": ", ec.message()));
    }
    return absl::OkStatus();
  }

  // Serves `fd` as it is: already bound and listening, wherever it was made.
  // The acceptor owns it once assigned; before that it is closed here.
  absl::Status Adopt(int fd) {
    beast::error_code ec;
    acceptor_->assign(tcp::v4(), fd, ec);
    if (ec) {
      os::UniqueFd unowned(fd);
      return absl::InvalidArgumentError(
          absl::StrCat("cannot serve the given listening socket: ", ec.message()));
    }
    // assign takes any descriptor; only a listening socket will do.
    using Accepting = asio::detail::socket_option::boolean<SOL_SOCKET, SO_ACCEPTCONN>;
    Accepting accepting;
    acceptor_->get_option(accepting, ec);
    if (ec || !accepting.value()) {
      return absl::InvalidArgumentError("the given descriptor is not a listening TCP socket");
    }
    return absl::OkStatus();
  }

  uint16_t port() const override { return port_; }
  int open_connections() const override { return shared_->limit->open(); }

  void Stop(int grace_secs) override {
    absl::MutexLock stop_lock(&stop_mu_);
    if (stopped_) return;
    stopped_ = true;
    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(std::max(0, grace_secs));
    shared_->stopping = true;
    if (in_process_) UnregisterInProcessPeer(in_process_host_, port_, in_process_.get());
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
      absl::MutexLock lock(&shared_->mu);
      Duration remaining = std::max(Duration::zero(), deadline - std::chrono::steady_clock::now());
      shared_->mu.AwaitWithTimeout(absl::Condition(shared_.get(), &Shared::NoneInFlight),
                                   absl::FromChrono(remaining));
    }
    // Within the same grace; what is left ends with the connections below.
    if (in_process_) StopInProcessPeer(*in_process_, deadline);
    work_.reset();
    ioc_->stop();
    for (auto& thread : io_threads_) thread.join();
    io_threads_.clear();
    shared_->io_stopped = true;
    {
      // No I/O thread runs now, so closing here races with nothing. The
      // coroutine frames stay until the io_context is destroyed.
      absl::MutexLock lock(&shared_->mu);
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
  std::shared_ptr<InProcessPeer> in_process_;  // null: served over TCP only
  std::string in_process_host_;
  absl::Mutex stop_mu_;
  bool stopped_ ABSL_GUARDED_BY(stop_mu_) = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Server>> Server::Start(const ServerOptions& options,
                                                      Handler handler) {
  // A given listening socket is ours whatever happens (see ServerOptions).
  os::UniqueFd adopted(options.listen_fd);
  if (!handler) return absl::InvalidArgumentError("server needs a handler");
  using std::chrono::milliseconds;
  if (options.io_threads < 1 || options.max_concurrent_handlers < 1 ||
      options.max_connections < 1 || options.max_header_bytes < 1 ||
      options.header_timeout <= milliseconds::zero() ||
      options.body_timeout <= milliseconds::zero() ||
      options.idle_timeout <= milliseconds::zero()) {
    return absl::InvalidArgumentError(
        "io_threads, max_concurrent_handlers, max_connections, max_header_bytes and the "
        "timeouts must be positive");
  }
  std::shared_ptr<ssl::context> tls;
  if (options.tls.enabled()) {
    auto context = MakeServerTlsContext(options.tls);
    if (!context.ok()) return context.status();
    tls = std::move(*context);
  }
  auto server = std::make_unique<ServerImpl>(options, std::move(handler), std::move(tls));
  (void)adopted.release();  // Listen closes or keeps it from here
  if (absl::Status status = server->Listen(); !status.ok()) return status;
  return server;
}

}  // namespace aevatar::http
