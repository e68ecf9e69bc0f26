#include "http/client.h"

// Each exchange runs a coroutine on a private io_context on the caller's
// thread: resolve, connect, (for https) TLS handshake, write, read, all under
// one absolute deadline (beast::tcp_stream::expires_at, which also times the
// TLS layer's reads and writes). The context runs until that deadline at
// most, which also bounds the name lookup the stream's timer cannot cover.

#include <array>
#include <exception>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "http/beast_private.h"
#include "http/tls.h"
#include "http/url.h"

namespace aevatar::http {
namespace {

using Clock = std::chrono::steady_clock;
using HeadersCallback = std::function<void(const ClientResponse&)>;
using ChunkCallback = std::function<bool(std::string_view chunk)>;

constexpr size_t kMaxResponseHeaderBytes = 64 << 10;
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
  ClientResponse response;
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

bhttp::request<bhttp::string_body> BuildRequest(const ClientRequest& request, const HttpUrl& url) {
  bhttp::request<bhttp::string_body> message;
  message.version(11);
  message.method_string(request.method);
  message.target(url.target);
  CopyToFields(request.headers, message.base());
  if (message.find(bhttp::field::host) == message.end()) {
    message.set(bhttp::field::host, url.HostHeader());
  }
  message.body() = request.body;
  message.prepare_payload();  // Content-Length for a body (and for an empty POST)
  // One exchange per connection: tell the server not to hold it open.
  message.keep_alive(false);
  return message;
}

// Writes the request and reads the answer on a connected (and, for https,
// handshaken) stream: beast::tcp_stream or TlsStream.
template <class Stream>
asio::awaitable<absl::Status> Converse(Stream& stream, Call& call) {
  beast::error_code ec;
  bhttp::request<bhttp::string_body> message = BuildRequest(call.request, call.url);
  beast::error_code write_error;
  co_await bhttp::async_write(stream, message, NoThrow(write_error));
  if (write_error == beast::error::timeout) co_return ErrorFor(write_error, call, "write");
  // A server may answer early (413) and stop reading; try to read that answer
  // before reporting the failed write.

  beast::flat_buffer buffer;
  bhttp::response_parser<bhttp::buffer_body> parser;
  parser.body_limit(call.request.max_response_bytes);
  parser.header_limit(kMaxResponseHeaderBytes);
  if (call.request.method == "HEAD") parser.skip(true);
  co_await bhttp::async_read_header(stream, buffer, parser, NoThrow(ec));
  if (ec) co_return write_error ? ErrorFor(write_error, call, "write") : ErrorFor(ec, call, "read");
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
  // One exchange per connection, so no TLS close_notify round trip: the
  // body's framing already said where it ends.
  beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_both, ec);
  co_return absl::OkStatus();
}

asio::awaitable<absl::Status> ExchangeOnce(Call& call) {
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

  beast::tcp_stream stream(executor);
  stream.expires_at(call.deadline);
  co_await stream.async_connect(endpoints, NoThrow(ec));
  if (ec) co_return ErrorFor(ec, call, "connect");
  stream.socket().set_option(tcp::no_delay(true), ec);
  if (call.tls == nullptr) co_return co_await Converse(stream, call);

  std::optional<TlsStream> tls;
  try {
    tls.emplace(std::move(stream), *call.tls);
  } catch (const boost::system::system_error& e) {  // Asio's answer to SSL_new failing
    co_return absl::InternalError(absl::StrCat("TLS: ", e.what()));
  }
  if (absl::Status st = PrepareTlsStream(*tls, call.url.host); !st.ok()) co_return st;
  co_await tls->async_handshake(ssl::stream_base::client, NoThrow(ec));
  if (ec == beast::error::timeout) co_return ErrorFor(ec, call, "TLS handshake");
  if (ec) co_return TlsHandshakeError(*tls, ec, Where(call.url));
  co_return co_await Converse(*tls, call);
}

absl::StatusOr<ClientResponse> RunExchange(const ClientRequest& request,
                                           const HeadersCallback* on_headers,
                                           const ChunkCallback& on_chunk) {
  absl::StatusOr<HttpUrl> url = ParseHttpUrl(request.url);
  if (!url.ok()) return url.status();
  std::shared_ptr<ssl::context> tls;
  if (url->tls) {
    auto context = SharedClientTlsContext(request.tls);
    if (!context.ok()) return context.status();
    tls = std::move(*context);
  }
  Clock::time_point deadline = Clock::now() + request.timeout;
  Call call{request, *url, deadline, on_headers, on_chunk, tls.get(), {}};

  asio::io_context ioc(1);
  std::optional<absl::Status> result;
  std::exception_ptr failure;
  asio::co_spawn(ioc, ExchangeOnce(call), [&](std::exception_ptr e, absl::Status status) {
    failure = e;
    result = std::move(status);
  });
  // The stream's timer enforces the deadline; this bound covers the lookup.
  ioc.run_until(deadline + std::chrono::milliseconds(50));
  if (failure) std::rethrow_exception(failure);  // thrown by the caller's own callback
  if (!result) {
    return absl::DeadlineExceededError(absl::StrCat("http exchange with ", Where(*url),
                                                    " exceeded ", request.timeout.count(), " ms"));
  }
  if (!result->ok()) return *result;
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
