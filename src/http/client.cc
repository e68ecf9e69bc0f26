#include "http/client.h"

// Each exchange runs a coroutine on its connection's own io_context, on the
// caller's thread: (for a new connection) resolve, connect and, for https,
// the TLS handshake; then write and read, all under one absolute deadline
// (beast::tcp_stream::expires_at, which also times the TLS layer's reads and
// writes). The context runs until that deadline at most, which also bounds
// the name lookup the stream's timer cannot cover. With a ConnectionPool, a
// connection the server keeps open goes back to the pool with its context
// (client_connection.h), to be run by whichever thread takes it next.

#include <array>
#include <exception>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "http/beast_private.h"
#include "http/client_connection.h"
#include "http/header_text.h"
#include "http/in_process.h"
#include "http/tls.h"
#include "http/url.h"

namespace aevatar::http {
namespace {

using Clock = std::chrono::steady_clock;
using HeadersCallback = std::function<void(const ClientResponse&)>;
using ChunkCallback = std::function<bool(std::string_view chunk)>;

// A server sends a 100 or a 103 or two; more is a peer stalling the exchange.
constexpr int kMaxInterimResponses = 8;
constexpr size_t kReadChunkBytes = 64 << 10;

// Everything one exchange needs; outlives the coroutine (it is on the stack of
// RunExchange, which runs the io_context to completion or destroys it first).
struct Call {
  const ClientRequest& request;
  const HttpUrl& url;
  Clock::time_point deadline;
  const HeadersCallback* on_headers;
  const ChunkCallback& on_chunk;
  ssl::context* tls;  // https only
  bool keep_alive;    // ask the server to keep the connection (a pool will take it)
  ClientResponse response;
  // What happened on the wire, for the pool and the replay decision.
  bool request_written = false;       // some request byte was handed to the socket
  bool closed_before_answer = false;  // the peer ended the connection before any answer byte
  bool reusable = false;              // answer read whole; the server keeps the connection
};

std::string Where(const HttpUrl& url) { return absl::StrCat(url.host, ":", url.port); }

// Maps a transport error at `stage` to the Status the contract promises.
absl::Status ErrorFor(const beast::error_code& ec, const Call& call, const std::string& stage) {
  std::string where = Where(call.url);
  if (ec == beast::error::timeout) {
    return absl::DeadlineExceededError(absl::StrCat("http exchange with ", where, " exceeded ",
                                                    call.request.timeout.count(), " ms"));
  }
  if (ec == bhttp::error::body_limit) {
    return absl::ResourceExhaustedError(absl::StrCat("response body from ", where, " exceeds ",
                                                     call.request.max_response_bytes, " bytes"));
  }
  if (ec == bhttp::error::header_limit) {
    return absl::ResourceExhaustedError(absl::StrCat("response header from ", where, " too large"));
  }
  return absl::UnavailableError(absl::StrCat(stage, " ", where, ": ", ec.message()));
}

bhttp::request<bhttp::string_body> BuildRequest(const ClientRequest& request, const HttpUrl& url,
                                                bool keep_alive) {
  bhttp::request<bhttp::string_body> message;
  message.version(11);
  message.method_string(request.method);
  message.target(url.target);
  CopyToFields(request.headers, message.base());
  if (message.find(bhttp::field::host) == message.end()) {
    message.set(bhttp::field::host, url.HostHeader());
  }
  message.body() = request.body;
  if (SendsContentLength(request.method, request.body.size())) {
    message.content_length(request.body.size());
  }
  // Without a pool, one exchange per connection: tell the server not to hold it open.
  message.keep_alive(keep_alive);
  return message;
}

// True for the ways a connection the peer has already closed fails a read
// or a write: clean EOF (plain or TLS), a reset, a write into a closed pipe.
bool ClosedByPeer(const beast::error_code& ec) {
  return ec == bhttp::error::end_of_stream || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
         ec == ssl::error::stream_truncated;
}

// Methods a client may repeat without changing the outcome (RFC 9110 9.2.2).
bool Idempotent(const std::string& method) {
  return method == "GET" || method == "HEAD" || method == "OPTIONS" || method == "TRACE" ||
         method == "PUT" || method == "DELETE";
}

// Everything a connection was set up for: a parked connection serves only a
// request that would have made the same one (same trust, same identity).
std::string PoolKey(const HttpUrl& url, const ClientTls& tls) {
  if (!url.tls) return absl::StrCat("http\n", url.host, "\n", url.port);
  return absl::StrCat("https\n", url.host, "\n", url.port, "\n", tls.ca_file, "\n", tls.cert_file,
                      "\n", tls.key_file);
}

// Writes the request and reads the answer on a connected (and, for https,
// handshaken) stream: beast::tcp_stream or TlsStream.
template <class Stream>
asio::awaitable<absl::Status> Converse(Stream& stream, Call& call) {
  beast::error_code ec;
  bhttp::request<bhttp::string_body> message =
      BuildRequest(call.request, call.url, call.keep_alive);
  beast::error_code write_error;
  size_t written = co_await bhttp::async_write(stream, message, NoThrow(write_error));
  call.request_written = written > 0 || !write_error;
  if (write_error == beast::error::timeout) co_return ErrorFor(write_error, call, "write");
  // A server may answer early (413) and stop reading; try to read that answer
  // before reporting the failed write.

  beast::flat_buffer buffer;
  std::optional<bhttp::response_parser<bhttp::buffer_body>> answer;
  // Interim answers (100 Continue, 103 Early Hints) come before the final one
  // on the same connection (RFC 9110 §15.2). Taking one for the answer would
  // leave the final one in the socket, read by the next exchange on a pooled
  // connection: another caller's answer.
  for (int interim = 0;; ++interim) {
    answer.emplace();
    answer->body_limit(call.request.max_response_bytes);
    answer->header_limit(kMaxResponseHeaderBytes);
    if (call.request.method == "HEAD") answer->skip(true);
    co_await bhttp::async_read_header(stream, buffer, *answer, NoThrow(ec));
    if (ec) {
      call.closed_before_answer = interim == 0 && buffer.size() == 0 && ClosedByPeer(ec) &&
                                  (!write_error || ClosedByPeer(write_error));
      co_return write_error ? ErrorFor(write_error, call, "write") : ErrorFor(ec, call, "read");
    }
    const unsigned status = answer->get().result_int();
    if (status < 100 || status >= 200 || status == 101) break;
    if (interim == kMaxInterimResponses) {
      co_return absl::UnavailableError(absl::StrCat("read ", Where(call.url), ": more than ",
                                                    kMaxInterimResponses, " interim responses"));
    }
  }
  bhttp::response_parser<bhttp::buffer_body>& parser = *answer;
  call.response.status = static_cast<int>(parser.get().result_int());
  CopyFromFields(parser.get().base(), call.response.headers);
  if (call.on_headers != nullptr) (*call.on_headers)(call.response);

  std::array<char, kReadChunkBytes> chunk;
  while (!parser.is_done()) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    co_await bhttp::async_read_some(stream, buffer, parser, NoThrow(ec));
    if (ec == bhttp::error::need_buffer) ec = {};
    if (ec) co_return ErrorFor(ec, call, "read");
    size_t filled = chunk.size() - parser.get().body().size;
    if (filled > 0 && !call.on_chunk(std::string_view(chunk.data(), filled))) {
      co_return absl::CancelledError("response body consumer stopped the exchange");
    }
  }
  // Bytes past the answer would be read as the next one's, and a failed
  // write leaves the request's framing unknown: neither is reused.
  // A 101 hands the connection to another protocol.
  call.reusable = call.keep_alive && parser.keep_alive() && buffer.size() == 0 && !write_error &&
                  call.response.status >= 200;
  // A connection not kept is closed without a TLS close_notify round trip:
  // the body's framing already said where it ends.
  if (!call.reusable) {
    beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_both, ec);
  }
  co_return absl::OkStatus();
}

// Resolves, connects and (for https) handshakes `connection`'s stream.
asio::awaitable<absl::Status> Connect(PooledConnection& connection, Call& call) {
  auto executor = co_await asio::this_coro::executor;
  beast::error_code ec;
  std::vector<tcp::endpoint> endpoints;
  asio::ip::address literal = asio::ip::make_address(call.url.host, ec);
  if (!ec) {
    endpoints.emplace_back(literal, call.url.port);  // no lookup, no resolver thread
  } else {
    tcp::resolver resolver(executor);
    auto results =
        co_await resolver.async_resolve(call.url.host, std::to_string(call.url.port), NoThrow(ec));
    if (ec) {
      co_return absl::UnavailableError(absl::StrCat("resolve ", call.url.host, ": ", ec.message()));
    }
    for (const auto& entry : results) endpoints.push_back(entry.endpoint());
  }

  beast::tcp_stream& stream = connection.plain.emplace(executor);
  stream.expires_at(call.deadline);
  co_await stream.async_connect(endpoints, NoThrow(ec));
  if (ec) co_return ErrorFor(ec, call, "connect");
  stream.socket().set_option(tcp::no_delay(true), ec);  // requests are one write each
  if (call.tls == nullptr) co_return absl::OkStatus();

  try {
    connection.tls.emplace(std::move(stream), *call.tls);
  } catch (const boost::system::system_error& e) {  // Asio's answer to SSL_new failing
    co_return absl::InternalError(absl::StrCat("TLS: ", e.what()));
  }
  connection.plain.reset();
  if (absl::Status st = PrepareTlsStream(*connection.tls, call.url.host); !st.ok()) co_return st;
  co_await connection.tls->async_handshake(ssl::stream_base::client, NoThrow(ec));
  if (ec == beast::error::timeout) co_return ErrorFor(ec, call, "TLS handshake");
  if (ec) co_return TlsHandshakeError(*connection.tls, ec, Where(call.url));
  co_return absl::OkStatus();
}

// One exchange on `connection`: connected first unless it came from a pool.
asio::awaitable<absl::Status> ExchangeOn(PooledConnection& connection, Call& call) {
  if (!connection.connected()) {
    if (absl::Status st = co_await Connect(connection, call); !st.ok()) co_return st;
  } else {
    connection.Tcp().expires_at(call.deadline);
  }
  if (connection.tls) co_return co_await Converse(*connection.tls, call);
  co_return co_await Converse(*connection.plain, call);
}

// Runs one exchange on `connection` on this thread; parks the connection in
// `pool` afterwards when it may carry another request, else closes it.
absl::Status RunOn(std::unique_ptr<PooledConnection> connection, Call& call, ConnectionPool* pool,
                   const std::string& key) {
  asio::io_context& ioc = *connection->ioc;
  ioc.restart();  // a parked connection's context ran out of work last time
  std::optional<absl::Status> result;
  std::exception_ptr failure;
  asio::co_spawn(ioc, ExchangeOn(*connection, call),
                 [&](std::exception_ptr e, absl::Status status) {
                   failure = e;
                   result = std::move(status);
                 });
  // The stream's timer enforces the deadline; this bound covers the lookup.
  ioc.run_until(call.deadline + std::chrono::milliseconds(50));
  if (failure) std::rethrow_exception(failure);  // thrown by the caller's own callback
  if (!result) {
    return absl::DeadlineExceededError(absl::StrCat(
        "http exchange with ", Where(call.url), " exceeded ", call.request.timeout.count(), " ms"));
  }
  if (result->ok() && call.reusable && pool != nullptr) {
    connection->Tcp().expires_never();
    pool->Give(key, std::move(connection));
  }
  return *std::move(result);
}

// The newest parked connection under `key` that is still open, or nullptr.
std::unique_ptr<PooledConnection> TakeOpen(ConnectionPool& pool, const std::string& key) {
  while (std::unique_ptr<PooledConnection> connection = pool.Take(key)) {
    if (connection->StillOpen()) return connection;
  }
  return nullptr;
}

// Hands an opened exchange's head and body to the callbacks.
absl::StatusOr<ClientResponse> ReadThrough(absl::StatusOr<OpenedExchange> opened,
                                           const HeadersCallback* on_headers,
                                           const ChunkCallback& on_chunk) {
  if (!opened.ok()) return opened.status();
  if (on_headers != nullptr) (*on_headers)(opened->head);
  while (true) {
    absl::StatusOr<std::optional<std::string>> chunk = opened->body->Next();
    if (!chunk.ok()) return chunk.status();
    if (!*chunk) return std::move(opened->head);
    if (!on_chunk(**chunk)) {
      return absl::CancelledError("response body consumer stopped the exchange");
    }
  }
}

absl::StatusOr<ClientResponse> RunExchange(const ClientRequest& request,
                                           const HeadersCallback* on_headers,
                                           const ChunkCallback& on_chunk) {
  absl::StatusOr<HttpUrl> url = ParseHttpUrl(request.url);
  if (!url.ok()) return url.status();
  if (!url->tls) {
    if (std::shared_ptr<InProcessPeer> peer = FindInProcessPeer(url->host, url->port)) {
      return ReadThrough(OpenInProcessExchange(request, *url, std::move(peer)), on_headers,
                         on_chunk);
    }
  }
  std::shared_ptr<ssl::context> tls;
  if (url->tls) {
    auto context = SharedClientTlsContext(request.tls);
    if (!context.ok()) return context.status();
    tls = std::move(*context);
  }
  ConnectionPool* pool = request.pool.get();
  const std::string key = pool != nullptr ? PoolKey(*url, request.tls) : std::string();
  const Clock::time_point deadline = Clock::now() + request.timeout;
  auto new_call = [&] {
    return Call{request, *url, deadline, on_headers, on_chunk, tls.get(), pool != nullptr, {}};
  };
  auto fresh = [&] {
    auto connection = std::make_unique<PooledConnection>();
    connection->tls_context = tls;
    return connection;
  };

  std::unique_ptr<PooledConnection> reused = pool != nullptr ? TakeOpen(*pool, key) : nullptr;
  if (reused != nullptr) {
    Call call = new_call();
    absl::Status status = RunOn(std::move(reused), call, pool, key);
    if (status.ok()) return std::move(call.response);
    if (!call.closed_before_answer) return status;
    // The server closed the idle connection as the request went out. Send it
    // again only where that cannot do a second time what the first did.
    if (call.request_written && !Idempotent(request.method)) {
      return absl::UnavailableError(
          absl::StrCat(Where(*url), " closed the kept-alive connection before answering a ",
                       request.method, "; it may have been processed, so it is not replayed"));
    }
  }
  Call call = new_call();
  absl::Status status = RunOn(fresh(), call, pool, key);
  if (!status.ok()) return status;
  return std::move(call.response);
}

}  // namespace

absl::Status CheckCaFile(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("no TLS CA file named");
  return MakeClientTlsContext(ClientTls{.ca_file = path, .cert_file = {}, .key_file = {}}).status();
}

// Through the shared cache, so the context the check builds (parsing the
// system trust store is the costly part) is the one later exchanges use.
absl::Status CheckClientTls(const ClientTls& tls) { return SharedClientTlsContext(tls).status(); }

absl::StatusOr<ClientResponse> Fetch(const ClientRequest& request) {
  std::string body;
  ChunkCallback append = [&body](std::string_view chunk) {
    body.append(chunk);
    return true;
  };
  absl::StatusOr<ClientResponse> response = RunExchange(request, nullptr, append);
  if (response.ok()) response->body = std::move(body);
  return response;
}

absl::StatusOr<ClientResponse> FetchStreaming(const ClientRequest& request,
                                              const HeadersCallback& on_headers,
                                              const ChunkCallback& on_chunk) {
  return RunExchange(request, on_headers ? &on_headers : nullptr, on_chunk);
}

}  // namespace aevatar::http
