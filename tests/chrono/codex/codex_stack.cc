#include "codex_stack.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace aevatar::testing {

FakeNyxidProxy::FakeNyxidProxy(uint16_t model_port, std::string provider_key)
    : model_port_(model_port), provider_key_(std::move(provider_key)) {
  auto server = http::Server::Start({}, [this](http::Request& request) { return Handle(request); });
  EXPECT_TRUE(server.ok()) << server.status();
  if (server.ok()) server_ = std::move(*server);
}

FakeNyxidProxy::~FakeNyxidProxy() {
  if (server_) server_->Stop(1);
}

std::string FakeNyxidProxy::base_url() const {
  return "http://127.0.0.1:" + std::to_string(server_ ? server_->port() : 0);
}

std::vector<ProxiedCall> FakeNyxidProxy::calls() const {
  absl::MutexLock lock(&mu_);
  return calls_;
}

http::Response FakeNyxidProxy::Handle(http::Request& request) {
  if (request.method != "POST" || request.path != "/api/v1/proxy/chrono-llm-public/responses") {
    return http::JsonResponse(404, R"({"code":"NOT_FOUND"})");
  }
  {
    absl::MutexLock lock(&mu_);
    calls_.push_back({request.QueryParam("_nyxid_via").value_or(""),
                      request.headers.Get("Authorization").value_or("")});
  }
  http::ClientRequest upstream;
  upstream.method = "POST";
  upstream.url = "http://127.0.0.1:" + std::to_string(model_port_) + "/v1/responses";
  upstream.headers.Set("Authorization", "Bearer " + provider_key_);
  upstream.headers.Set("Content-Type", "application/json");
  upstream.body = request.body;
  upstream.timeout = std::chrono::seconds(30);
  auto answer = http::Fetch(upstream);
  if (!answer.ok()) return http::JsonResponse(502, R"({"code":"UPSTREAM_UNREACHABLE"})");
  http::Response response;
  response.status = answer->status;
  response.body = std::move(answer->body);
  if (auto type = answer->headers.Get("Content-Type")) response.headers.Set("Content-Type", *type);
  return response;
}

CodexStack::CodexStack(const std::string& backend, std::vector<std::string> extra_args) {
  doubles::ResponsesDoubleOptions options;
  options.api_key = kProviderKey;
  options.record_path = dir_.path() + "/model-record.jsonl";
  auto model = doubles::ResponsesDouble::Start(options);
  EXPECT_TRUE(model.ok()) << model.status();
  if (!model.ok()) return;
  model_ = std::move(*model);
  nyxid_ = std::make_unique<FakeNyxidProxy>(model_->port(), kProviderKey);
  std::vector<std::string> args = {"--codex-model",   kModel, "--nyxid-url", nyxid_->base_url(),
                                   "--codex-backend", backend};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  chrono_ = std::make_unique<ChronoFixture>(args);
}

std::vector<nlohmann::json> CodexStack::ModelRecord() const {
  std::ifstream in(dir_.path() + "/model-record.jsonl");
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(nlohmann::json::parse(line, nullptr, false));
  }
  return lines;
}

http::ClientResponse CodexStack::Execute(const nlohmann::json& body,
                                         std::vector<std::pair<std::string, std::string>> headers,
                                         std::string* token_out, const std::string& subject) {
  return Post("/codex/execute", body, std::move(headers), token_out, subject);
}

http::ClientResponse CodexStack::Cancel(const std::string& run_id, const std::string& subject) {
  return Post("/codex/runs/" + run_id + "/cancel", nlohmann::json::object(), {}, nullptr, subject);
}

http::ClientResponse CodexStack::Post(const std::string& path, const nlohmann::json& body,
                                      std::vector<std::pair<std::string, std::string>> headers,
                                      std::string* token_out, const std::string& subject) {
  http::ClientRequest request;
  request.method = "POST";
  request.url = chrono_->service().base_url() + path;
  request.body = body.dump();
  request.headers.Set("Content-Type", "application/json");
  const std::string token = chrono_->issuer().Delegation(subject);
  if (token_out) *token_out = token;
  request.headers.Set("X-NyxID-Delegation-Token", token);
  for (auto& [name, value] : headers) request.headers.Set(name, value);
  request.timeout = std::chrono::seconds(150);
  auto response = http::Fetch(request);
  if (!response.ok()) return http::ClientResponse{0, {}, std::string(response.status().message())};
  return *response;
}

nlohmann::json CodexStack::Body(const std::string& prompt, int timeout_secs) {
  return {{"prompt", prompt},
          {"timeout_secs", timeout_secs},
          {"model_route", {{"user_service_id", kRoute}}}};
}

}  // namespace aevatar::testing
