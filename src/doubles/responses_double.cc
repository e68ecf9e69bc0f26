#include "doubles/responses_double.h"

#include <atomic>
#include <fstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "doubles/responses_events.h"
#include "doubles/responses_script.h"
#include "http/server.h"
#include "nlohmann/json.hpp"

namespace aevatar::doubles {
namespace {

http::Response ErrorReply(int status, std::string_view message) {
  const nlohmann::json body = {{"error", {{"message", message}, {"type", "responses_double"}}}};
  return http::JsonResponse(status, body.dump());
}

class Double final : public ResponsesDouble {
 public:
  explicit Double(ResponsesDoubleOptions options) : options_(std::move(options)) {}

  absl::Status Listen() {
    http::ServerOptions server_options;
    server_options.host = options_.host;
    server_options.port = options_.port;
    auto server = http::Server::Start(server_options,
                                      [this](http::Request& request) { return Handle(request); });
    if (!server.ok()) return server.status();
    server_ = std::move(*server);
    return absl::OkStatus();
  }

  ~Double() override { Stop(); }
  uint16_t port() const override { return server_->port(); }
  int requests() const override { return requests_.load(); }

  void Stop() override {
    if (!stopping_.HasBeenNotified()) stopping_.Notify();
    if (server_ != nullptr) server_->Stop();
  }

 private:
  http::Response Handle(const http::Request& request) {
    const int number = ++requests_;
    if (request.method != "POST" || !absl::EndsWith(request.path, "/responses")) {
      return ErrorReply(404, "responses-double serves POST …/responses only");
    }
    const std::optional<std::string> bearer = http::BearerToken(request);
    Record(request, bearer);
    if (!options_.api_key.empty() && bearer != options_.api_key) {
      return ErrorReply(401, "missing or wrong provider API key");
    }
    const Turn turn = DecideTurn(request.body);
    if (turn.fault == Fault::kServerError) return ErrorReply(500, "scripted server error");

    http::Response response;
    response.headers.Set("Content-Type", "text/event-stream");
    response.headers.Set("Cache-Control", "no-cache");
    response.stream = [this, turn, number](const http::ChunkWriter& write) {
      Stream(turn, number, write);
    };
    return response;
  }

  void Stream(const Turn& turn, int number, const http::ChunkWriter& write) {
    if (turn.fault == Fault::kHang) {
      // An SSE comment each second finds out when the client has gone.
      const absl::Time give_up = absl::Now() + absl::FromChrono(options_.hang_limit);
      while (absl::Now() < give_up && write(": waiting\n\n")) {
        if (stopping_.WaitForNotificationWithTimeout(absl::Seconds(1))) return;
      }
      return;
    }
    const std::vector<std::string> events =
        turn.fault == Fault::kMalformed ? MalformedEvents() : TurnEvents(turn, number);
    for (size_t i = 0; i < events.size(); ++i) {
      if (i > 0 && turn.fault == Fault::kSlow &&
          stopping_.WaitForNotificationWithTimeout(absl::FromChrono(options_.slow_gap))) {
        return;
      }
      if (!write(events[i])) return;
    }
  }

  void Record(const http::Request& request, const std::optional<std::string>& bearer) {
    if (options_.record_path.empty()) return;
    const nlohmann::json line = {
        {"path", request.path}, {"authorization", bearer.value_or("")}, {"body", request.body}};
    absl::MutexLock lock(&record_mu_);
    std::ofstream out(options_.record_path, std::ios::app);
    out << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }

  const ResponsesDoubleOptions options_;
  std::unique_ptr<http::Server> server_;
  std::atomic<int> requests_{0};
  absl::Notification stopping_;
  absl::Mutex record_mu_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ResponsesDouble>> ResponsesDouble::Start(
    const ResponsesDoubleOptions& options) {
  auto double_server = std::make_unique<Double>(options);
  if (auto status = double_server->Listen(); !status.ok()) return status;
  return double_server;
}

}  // namespace aevatar::doubles
