// TLS on the server: https with keep-alive, streaming and WebSockets over it,
// mutual TLS (a client certificate from the CA, none, or another CA's),
// plaintext on a TLS port, and certificate files that cannot be used. The
// committed test PKI is in tests/http/testdata (generate.sh says what each
// file is).
#include <atomic>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "http/client.h"
#include "http/server.h"
#include "http/websocket.h"
#include "http_test_util.h"
#include "testing/tls_front.h"
#include "testing/tls_probe.h"

namespace aevatar::http {
namespace {

using ::aevatar::testing::TlsFront;
using ::aevatar::testing::TlsProbe;
using testing::RawConnection;
using testing::StartOrDie;

std::string Pem(const std::string& name) { return TlsFront::Fixture(name); }

ServerOptions TlsOptions(bool mutual = false) {
  ServerOptions options;
  options.tls.cert_file = Pem("server.pem");
  options.tls.key_file = Pem("server.key");
  if (mutual) options.tls.client_ca_file = Pem("ca.pem");
  return options;
}

// Answers every request with its method and path; counts them.
std::unique_ptr<Server> EchoTlsServer(const std::shared_ptr<std::atomic<int>>& requests,
                                      bool mutual = false) {
  return StartOrDie(
      [requests](Request& request) {
        ++*requests;
        Response response;
        response.status = 200;
        response.body = request.method + " " + request.path;
        return response;
      },
      TlsOptions(mutual));
}

std::string HttpsUrl(const Server& server, const std::string& path) {
  return "https://127.0.0.1:" + std::to_string(server.port()) + path;
}

ClientTls TrustTestCa() {
  return ClientTls{.ca_file = Pem("ca.pem"), .cert_file = {}, .key_file = {}};
}

ClientTls WithClientCertificate(const std::string& name) {
  ClientTls tls = TrustTestCa();
  tls.cert_file = Pem(name + ".pem");
  tls.key_file = Pem(name + ".key");
  return tls;
}

absl::StatusOr<ClientResponse> GetOver(const Server& server, const ClientTls& tls) {
  ClientRequest request;
  request.url = HttpsUrl(server, "/hello");
  request.tls = tls;
  return Fetch(request);
}

TEST(TlsServer, ServesHttpsToAClientThatTrustsItsCa) {
  auto requests = std::make_shared<std::atomic<int>>(0);
  auto server = EchoTlsServer(requests);
  auto response = GetOver(*server, TrustTestCa());
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "GET /hello");

  // The system store alone does not know the test CA: the client refuses.
  auto untrusted = GetOver(*server, ClientTls{});
  ASSERT_FALSE(untrusted.ok());
  EXPECT_TRUE(absl::StrContains(untrusted.status().message(), "TLS verification"))
      << untrusted.status();
  EXPECT_EQ(*requests, 1);
}

TEST(TlsServer, KeepsATlsConnectionAliveAcrossRequests) {
  auto requests = std::make_shared<std::atomic<int>>(0);
  auto server = EchoTlsServer(requests);
  TlsProbe probe(server->port(), Pem("ca.pem"));
  ASSERT_TRUE(probe.ok());
  for (const std::string path : {"/one", "/two", "/three"}) {
    ASSERT_TRUE(probe.Send("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n"));
    auto response = probe.ReadResponse();
    ASSERT_TRUE(response.has_value()) << path;
    EXPECT_EQ(response->first, 200);
    EXPECT_EQ(response->second, "GET " + path);
  }
  EXPECT_EQ(server->open_connections(), 1);
}

TEST(TlsServer, StreamsAChunkedResponseOverTls) {
  auto server = StartOrDie(
      [](Request&) {
        Response response;
        response.status = 200;
        response.stream = [](const ChunkWriter& write) {
          for (int i = 0; i < 50; ++i) {
            if (!write(std::string(1000, static_cast<char>('a' + i % 26)))) return;
          }
        };
        return response;
      },
      TlsOptions());
  std::string received;
  ClientRequest request;
  request.url = HttpsUrl(*server, "/stream");
  request.tls = TrustTestCa();
  auto response = FetchStreaming(request, nullptr, [&](std::string_view chunk) {
    received.append(chunk);
    return true;
  });
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(received.size(), 50'000u);
  EXPECT_EQ(received.substr(49'000, 3), "xxx");
}

TEST(TlsServer, PlaintextOnATlsPortGetsNoHttpAnswer) {
  auto requests = std::make_shared<std::atomic<int>>(0);
  auto server = EchoTlsServer(requests);
  {
    RawConnection raw(server->port());
    ASSERT_TRUE(raw.connected());
    ASSERT_TRUE(raw.Send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"));
    EXPECT_FALSE(raw.Read().has_value());
  }
  EXPECT_EQ(*requests, 0);
  // And the listener goes on serving TLS clients.
  auto response = GetOver(*server, TrustTestCa());
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(*requests, 1);
}

TEST(TlsServer, MutualTlsTakesOnlyClientsWithACertificateFromItsCa) {
  auto requests = std::make_shared<std::atomic<int>>(0);
  auto server = EchoTlsServer(requests, /*mutual=*/true);
  auto accepted = GetOver(*server, WithClientCertificate("client"));
  ASSERT_TRUE(accepted.ok()) << accepted.status();
  EXPECT_EQ(accepted->status, 200);

  EXPECT_FALSE(GetOver(*server, TrustTestCa()).ok()) << "no client certificate";
  EXPECT_FALSE(GetOver(*server, WithClientCertificate("rogue-client")).ok())
      << "a client certificate from another CA";
  // Under TLS 1.3 the client may finish its handshake before the server's
  // verdict; then the server ends the connection before reading a request.
  TlsProbe rogue(server->port(), Pem("ca.pem"), Pem("rogue-client.pem"), Pem("rogue-client.key"));
  if (rogue.ok()) {
    rogue.Send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_FALSE(rogue.ReadResponse().has_value());
  }
  EXPECT_EQ(*requests, 1);
}

TEST(TlsServer, MutualTlsWithANameTakesOnlyTheNamedClient) {
  auto requests = std::make_shared<std::atomic<int>>(0);
  ServerOptions options = TlsOptions(/*mutual=*/true);
  options.tls.client_name = "client";  // client.pem names DNS:client; server.pem does not
  auto server = StartOrDie(
      [requests](Request&) {
        ++*requests;
        return Response{};
      },
      options);
  auto named = GetOver(*server, WithClientCertificate("client"));
  ASSERT_TRUE(named.ok()) << named.status();
  // server.pem is from the same CA and valid for client use, but names localhost.
  EXPECT_FALSE(GetOver(*server, WithClientCertificate("server")).ok());
  TlsProbe unnamed(server->port(), Pem("ca.pem"), Pem("server.pem"), Pem("server.key"));
  if (unnamed.ok()) {
    unnamed.Send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_FALSE(unnamed.ReadResponse().has_value());
  }
  EXPECT_EQ(*requests, 1);

  ServerOptions without_ca = TlsOptions();
  without_ca.tls.client_name = "client";
  EXPECT_EQ(Server::Start(without_ca, [](Request&) { return Response{}; }).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TlsServer, CarriesWebSocketsOverTlsAndMutualTls) {
  for (bool mutual : {false, true}) {
    auto server = StartOrDie(
        [](Request&) {
          return WebSocketUpgrade([](WebSocket& socket) {
            while (true) {
              auto message = socket.Read();
              if (!message.ok() || !socket.Write("echo " + *message)) return;
            }
          });
        },
        TlsOptions(mutual));
    const std::string url = "wss://127.0.0.1:" + std::to_string(server->port()) + "/ws";
    auto socket = ConnectWebSocket(url, {}, std::chrono::seconds(5), {},
                                   mutual ? WithClientCertificate("client") : TrustTestCa());
    ASSERT_TRUE(socket.ok()) << socket.status();
    for (const std::string text : {"one", "two"}) {
      ASSERT_TRUE((*socket)->Write(text));
      auto echoed = (*socket)->Read();
      ASSERT_TRUE(echoed.ok()) << echoed.status();
      EXPECT_EQ(*echoed, "echo " + text);
    }
    if (mutual) {
      auto refused = ConnectWebSocket(url, {}, std::chrono::seconds(5), {}, TrustTestCa());
      EXPECT_FALSE(refused.ok()) << "no client certificate";
    }
    // A stopping server ends the open session; the client sees it end.
    server->Stop(1);
    EXPECT_FALSE((*socket)->Read().ok());
  }
}

TEST(TlsServer, UnusableCertificateFilesFailTheStart) {
  auto handler = [](Request&) { return Response{}; };
  ServerOptions missing = TlsOptions();
  missing.tls.cert_file = Pem("missing.pem");
  ServerOptions mismatched = TlsOptions();
  mismatched.tls.key_file = Pem("client.key");
  ServerOptions no_key = TlsOptions();
  no_key.tls.key_file.clear();
  ServerOptions bad_client_ca = TlsOptions(true);
  bad_client_ca.tls.client_ca_file = Pem("missing-ca.pem");
  for (const ServerOptions& options : {missing, mismatched, no_key, bad_client_ca}) {
    auto server = Server::Start(options, handler);
    ASSERT_FALSE(server.ok());
    EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument) << server.status();
  }
  ClientTls client_mismatch = WithClientCertificate("client");
  client_mismatch.key_file = Pem("server.key");
  EXPECT_EQ(CheckClientTls(client_mismatch).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(CheckClientTls(WithClientCertificate("client")).ok());
}

}  // namespace
}  // namespace aevatar::http
