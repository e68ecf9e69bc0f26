#ifndef AEVATAR_CLI_RUN_EVENT_STREAM_H_
#define AEVATAR_CLI_RUN_EVENT_STREAM_H_

// Following a workflow run's server-sent events across broken connections.
//
// The first exchange is either the POST that starts the run with
// `wait: stream` or a GET of the run's events route. Each event carries an
// `id:` (its sequence number); the stream ends with a `run.end` event holding
// the run's read model. When the connection breaks (aevatar restarted, a
// proxy dropped it) before `run.end`, the follower reconnects to
// GET /api/workflow-runs/{id}/events with the last id it saw as
// Last-Event-ID, so the server replays only what came after, and tells the
// user on stderr. Reconnects are bounded: kMaxReconnects attempts in a row
// without an event between them, waiting ReconnectDelay between attempts.

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "cli/aevatar_session.h"
#include "nlohmann/json.hpp"

namespace aevatar::cli {

// One server-sent event: its `id:`, `event:` and (joined) `data:` fields.
struct SseEvent {
  std::string id;
  std::string type;
  std::string data;
};

// Splits a byte stream into events (blank-line separated; "\n" or "\r\n"
// line ends; comment lines and unknown fields ignored). Not thread-safe.
class SseParser {
 public:
  // Appends `chunk` and calls `on_event` for each event it completes.
  void Feed(std::string_view chunk, const std::function<void(const SseEvent&)>& on_event);

 private:
  std::string buffer_;
  SseEvent pending_;
  bool has_field_ = false;
  bool has_data_ = false;  // a data line came: the next one joins with "\n"
};

inline constexpr int kMaxReconnects = 10;

// The wait before the `attempt`-th reconnect in a row (1-based): 500 ms
// doubling, capped at 8 s.
std::chrono::milliseconds ReconnectDelay(int attempt);

// What the follower does with what it reads.
struct RunStreamSink {
  // The run's id, once known (from the X-Run-Id header or the caller).
  std::function<void(const std::string& run_id)> on_run_id;
  // Every event but run.end, with its data parsed (null when not JSON).
  std::function<void(const SseEvent& event, const nlohmann::json& data)> on_event;
  // run.end: the run's read model.
  std::function<void(const nlohmann::json& run)> on_end;
};

// The result of following a run.
struct RunStreamResult {
  bool ended = false;      // run.end arrived
  std::string run_status;  // its `status` when it did
  int reconnects = 0;      // successful resumptions
  // When !ended: why (the transport error, or the server's reply as
  // "error: …" lines).
  std::string error;
};

// Starts the run with `start_body` (POST, wait: stream) when `run_id` is
// empty, else watches `run_id`'s events from the start; follows the stream
// to its end as above. `sleep` is how the follower waits (tests shorten it).
RunStreamResult FollowRunEvents(
    const AevatarSession& session, const std::string& run_id, const std::string& start_body,
    const RunStreamSink& sink,
    const std::function<void(std::chrono::milliseconds)>& sleep = nullptr);

}  // namespace aevatar::cli

#endif  // AEVATAR_CLI_RUN_EVENT_STREAM_H_
