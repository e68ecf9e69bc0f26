#include "nyxid_fixture.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <random>

#include "gtest/gtest.h"

namespace aevatar::testing {

namespace {

// Whether a listener could bind `port` now (as the services do: SO_REUSEADDR).
bool CanBind(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

uint16_t PickFreePortRange(int count) {
  int ephemeral_low = 32768;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> ephemeral_low;
  const int low = 10000;
  const int high = std::max(low + 1000, ephemeral_low) - count;
  std::mt19937 random(std::random_device{}());
  for (int attempt = 0; attempt < 200; ++attempt) {
    const int base = std::uniform_int_distribution<int>(low, high - 1)(random);
    bool all_free = true;
    for (int i = 0; i < count && all_free; ++i) all_free = CanBind(static_cast<uint16_t>(base + i));
    if (all_free) return static_cast<uint16_t>(base);
  }
  ADD_FAILURE() << "no " << count << " consecutive free ports below " << ephemeral_low;
  return 0;
}

uint16_t PickFreePort() { return PickFreePortRange(1); }

NyxidFixture::NyxidFixture(const std::string& bootstrap_yaml, std::vector<std::string> extra_args,
                           uint16_t port) {
  std::ofstream(dir_.path() + "/bootstrap.yaml") << bootstrap_yaml;
  StartService(port, extra_args);
}

void NyxidFixture::StartService(uint16_t port, const std::vector<std::string>& extra_args) {
  std::vector<std::string> argv = {BinaryPath("nyxid"), "serve",
                                   "--listen",          "127.0.0.1:" + std::to_string(port),
                                   "--state-dir",       dir_.path() + "/state",
                                   "--bootstrap",       dir_.path() + "/bootstrap.yaml"};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  service_ = std::make_unique<ServiceProcess>(argv, dir_.path() + "/nyxid.log");
}

void NyxidFixture::Restart(std::vector<std::string> extra_args) {
  const uint16_t port = service_->port();
  service_.reset();  // SIGTERM and wait
  StartService(port, extra_args);
}

http::ClientResponse NyxidFixture::Call(const std::string& method, const std::string& path,
                                        const std::string& bearer, const std::string& body,
                                        std::vector<std::pair<std::string, std::string>> headers) {
  http::ClientRequest request;
  request.method = method;
  request.url = url() + path;
  request.body = body;
  request.timeout = std::chrono::seconds(60);
  request.tls.ca_file = TestPki("ca.pem");  // an https broker only
  if (!body.empty()) request.headers.Set("Content-Type", "application/json");
  if (!bearer.empty()) request.headers.Set("Authorization", "Bearer " + bearer);
  for (auto& [name, value] : headers) request.headers.Add(name, value);
  auto response = http::Fetch(request);
  if (!response.ok()) {
    ADD_FAILURE() << method << " " << path << ": " << response.status();
    return {};
  }
  return *response;
}

std::string NyxidFixture::Login(const std::string& username, const std::string& password) {
  auto response = Call("POST", "/api/v1/auth/login", "",
                       nlohmann::json{{"username", username}, {"password", password}}.dump());
  if (response.status != 200) return "";
  return JsonOf(response).value("access_token", "");
}

nlohmann::json NyxidFixture::CreateAgentKey(const std::string& bearer, const std::string& label,
                                            const std::vector<std::string>& allowed) {
  nlohmann::json body = {{"label", label}};
  if (!allowed.empty()) body["allowed_services"] = allowed;
  auto response = Call("POST", "/api/v1/agent-keys", bearer, body.dump());
  EXPECT_EQ(response.status, 201) << response.body;
  return JsonOf(response);
}

nlohmann::json NyxidFixture::KeyBySlug(const std::string& bearer, const std::string& slug) {
  auto response = Call("GET", "/api/v1/keys", bearer);
  nlohmann::json doc = JsonOf(response);
  if (!doc.contains("keys")) return nullptr;
  for (const nlohmann::json& key : doc["keys"]) {
    if (key.value("slug", "") == slug) return key;
  }
  return nullptr;
}

nlohmann::json JsonOf(const http::ClientResponse& response) {
  nlohmann::json doc = nlohmann::json::parse(response.body, nullptr, false);
  return doc.is_discarded() ? nlohmann::json() : doc;
}

void ExpectProblem(const http::ClientResponse& response, int status, const std::string& code) {
  EXPECT_EQ(response.status, status) << response.body;
  EXPECT_EQ(response.headers.Get("Content-Type").value_or(""), "application/problem+json");
  nlohmann::json body = JsonOf(response);
  EXPECT_EQ(body.value("code", ""), code) << response.body;
  EXPECT_EQ(body.value("status", 0), status);
  EXPECT_FALSE(body.value("diagnostic_id", "").empty());
}

}  // namespace aevatar::testing
