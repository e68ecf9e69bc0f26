#ifndef AEVATAR_TESTS_NYXID_PROXY_RECORDING_UPSTREAM_H_
#define AEVATAR_TESTS_NYXID_PROXY_RECORDING_UPSTREAM_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "http/server.h"

namespace aevatar::testing {

// One request as the upstream received it.
struct RecordedRequest {
  std::string method;
  std::string target;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // The first value of `name` (case-insensitive), "" when absent.
  std::string Header(const std::string& name) const;
};

// An in-test HTTP upstream on loopback that records every request it gets
// (so a test can prove which credentials reached it) and answers with a
// server-sent event stream whose pacing the test controls:
//   kEvents   two events, then the end;
//   kLatched  the first event, then waits until the test calls
//             ContinueStream() (or the hang guard passes), then the second;
//   kHeld     nothing (not even the status line) until ReleaseHeld() or the
//             hang guard.
// No mode depends on timing: each wait ends on the test's signal.
class RecordingUpstream {
 public:
  enum class Mode { kEvents, kLatched, kHeld };
  static constexpr char kFirstEvent[] =
      "event: response.created\ndata: {\"type\":\"response.created\"}\n\n";
  static constexpr char kSecondEvent[] =
      "event: response.completed\ndata: {\"type\":\"response.completed\"}\n\n";

  RecordingUpstream();
  ~RecordingUpstream();  // releases held handlers, then stops

  uint16_t port() const { return server_->port(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port()); }

  // Sets the mode of the following requests, with fresh latches.
  void SetMode(Mode mode);
  std::vector<RecordedRequest> Requests() const;

  // kLatched: lets the stream go on past the first event.
  void ContinueStream();
  // kLatched: whether a handler went on because the test said so (true) or
  // only because the hang guard passed (false). Waits for the handler.
  bool ContinuedByTest();
  // kHeld: lets held handlers answer (an empty 200).
  void ReleaseHeld();

 private:
  struct Latches {
    absl::Notification proceed;  // ContinueStream / ReleaseHeld
    absl::Notification handler_went_on;
    bool by_test = false;  // written before handler_went_on is notified
  };
  http::Response Handle(http::Request& request);

  mutable absl::Mutex mu_;
  Mode mode_ ABSL_GUARDED_BY(mu_) = Mode::kEvents;
  std::shared_ptr<Latches> latches_ ABSL_GUARDED_BY(mu_);
  std::vector<RecordedRequest> requests_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<http::Server> server_;
};

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_NYXID_PROXY_RECORDING_UPSTREAM_H_
