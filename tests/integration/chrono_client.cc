#include "chrono_client.h"

#include <chrono>
#include <thread>

namespace aevatar::testing {

ChronoFixture::ChronoFixture(std::vector<std::string> extra_args)
    : extra_args_(std::move(extra_args)) {
  issuer_.WriteJwks(dir_.path() + "/jwks.json");
  Start();
}

void ChronoFixture::Start() {
  std::vector<std::string> argv = {BinaryPath("chrono-sandbox"),
                                   "serve",
                                   "--listen",
                                   "127.0.0.1:0",
                                   "--state-dir",
                                   dir_.path() + "/state",
                                   "--jwks-file",
                                   dir_.path() + "/jwks.json"};
  argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
  service_ = std::make_unique<ServiceProcess>(argv, dir_.path() + "/service.log");
}

void ChronoFixture::Restart() {
  service_.reset();
  Start();
}

http::ClientResponse ChronoFixture::Call(const std::string& method, const std::string& path,
                                         const std::string& body, const std::string& subject,
                                         std::vector<std::pair<std::string, std::string>> headers,
                                         const std::string* token) {
  http::ClientRequest request;
  request.method = method;
  request.url = service_->base_url() + path;
  request.body = body;
  if (!body.empty()) request.headers.Set("Content-Type", "application/json");
  const std::string minted = token ? *token : issuer_.Delegation(subject);
  if (!minted.empty()) request.headers.Set("X-NyxID-Delegation-Token", minted);
  for (auto& [name, value] : headers) request.headers.Set(name, value);
  auto response = http::Fetch(request);
  if (!response.ok()) return http::ClientResponse{0, {}, std::string(response.status().message())};
  return *response;
}

http::ClientResponse ChronoFixture::Metrics() {
  const std::string none;
  return Call("GET", "/metrics", "", "", {}, &none);
}

http::ClientResponse ChronoFixture::Submit(const nlohmann::json& body, const std::string& key,
                                           const std::string& subject) {
  return Call("POST", "/executions", body.dump(), subject, {{"Idempotency-Key", key}});
}

nlohmann::json ChronoFixture::WaitDone(const std::string& operation_id, int timeout_secs,
                                       const std::string& subject) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_secs);
  nlohmann::json doc;
  while (std::chrono::steady_clock::now() < deadline) {
    doc = BodyJson(Call("GET", "/executions/" + operation_id, "", subject));
    if (doc.value("done", false)) return doc;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return doc;
}

nlohmann::json BodyJson(const http::ClientResponse& response) {
  return nlohmann::json::parse(response.body, nullptr, false);
}

}  // namespace aevatar::testing
