#include "nyxid/proxy/recording_upstream.h"

#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "testing/poll.h"

namespace aevatar::testing {
namespace {

absl::Duration Guard() { return absl::FromChrono(kHangGuard); }

}  // namespace

std::string RecordedRequest::Header(const std::string& name) const {
  for (const auto& [field, value] : headers) {
    if (absl::EqualsIgnoreCase(field, name)) return value;
  }
  return "";
}

RecordingUpstream::RecordingUpstream() : latches_(std::make_shared<Latches>()) {
  http::ServerOptions options;
  auto server = http::Server::Start(options, [this](http::Request& r) { return Handle(r); });
  if (!server.ok()) {
    ADD_FAILURE() << "recording upstream: " << server.status();
    return;
  }
  server_ = std::move(*server);
}

RecordingUpstream::~RecordingUpstream() {
  ReleaseHeld();
  if (server_) server_->Stop();
}

void RecordingUpstream::SetMode(Mode mode) {
  absl::MutexLock lock(&mu_);
  mode_ = mode;
  latches_ = std::make_shared<Latches>();
}

std::vector<RecordedRequest> RecordingUpstream::Requests() const {
  absl::MutexLock lock(&mu_);
  return requests_;
}

void RecordingUpstream::ContinueStream() {
  absl::MutexLock lock(&mu_);
  if (!latches_->proceed.HasBeenNotified()) latches_->proceed.Notify();
}

void RecordingUpstream::ReleaseHeld() { ContinueStream(); }

bool RecordingUpstream::ContinuedByTest() {
  std::shared_ptr<Latches> latches;
  {
    absl::MutexLock lock(&mu_);
    latches = latches_;
  }
  if (!latches->handler_went_on.WaitForNotificationWithTimeout(Guard())) return false;
  return latches->by_test;
}

http::Response RecordingUpstream::Handle(http::Request& request) {
  Mode mode;
  std::shared_ptr<Latches> latches;
  {
    absl::MutexLock lock(&mu_);
    requests_.push_back({request.method, request.target, request.headers.fields(), request.body});
    mode = mode_;
    latches = latches_;
  }
  if (mode == Mode::kHeld) {
    latches->proceed.WaitForNotificationWithTimeout(Guard());
    return http::Response{};
  }
  http::Response response;
  response.headers.Set("Content-Type", "text/event-stream");
  response.headers.Set("Cache-Control", "no-cache");
  response.stream = [mode, latches](const http::ChunkWriter& write) {
    if (!write(kFirstEvent)) return;
    if (mode == Mode::kLatched) {
      latches->by_test = latches->proceed.WaitForNotificationWithTimeout(Guard());
      latches->handler_went_on.Notify();
    }
    write(kSecondEvent);
  };
  return response;
}

}  // namespace aevatar::testing
