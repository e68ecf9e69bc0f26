#include "clients/canned_server.h"

namespace aevatar::orchestrator::testing {

CannedServer::CannedServer() {
  auto server = http::Server::Start({}, [canned = canned_](http::Request& request) {
    absl::MutexLock lock(&canned->mu);
    auto it = canned->answers.find(request.path);
    if (it == canned->answers.end()) return http::JsonResponse(404, "");
    return http::JsonResponse(it->second.first, it->second.second);
  });
  if (server.ok()) server_ = std::move(*server);
}

CannedServer::~CannedServer() {
  if (server_) server_->Stop();
}

std::string CannedServer::url() const {
  return "http://127.0.0.1:" + std::to_string(server_->port());
}

void CannedServer::Answer(const std::string& path, int status, std::string body) {
  absl::MutexLock lock(&canned_->mu);
  canned_->answers[path] = {status, std::move(body)};
}

}  // namespace aevatar::orchestrator::testing
