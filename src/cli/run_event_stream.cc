#include "cli/run_event_stream.h"

#include <algorithm>
#include <iostream>
#include <thread>

#include "base/json_read.h"
#include "cli/server_replies.h"
#include "http/client.h"
#include "http/message.h"

namespace aevatar::cli {
namespace {

using nlohmann::json;

constexpr size_t kMaxErrorBody = 64 << 10;

bool Retryable(int http_status) {
  return http_status == 502 || http_status == 503 || http_status == 504;
}

http::ClientRequest StreamRequest(const AevatarSession& session, const std::string& run_id,
                                  const std::string& start_body, const std::string& last_id) {
  http::ClientRequest request;
  request.timeout = std::chrono::hours(2);
  request.headers.Set("Authorization", "Bearer " + session.token);
  request.headers.Set("Accept", "text/event-stream");
  if (run_id.empty()) {
    request.method = "POST";
    request.url = session.url + "/api/workflow-runs";
    request.body = start_body;
    request.headers.Set("Content-Type", "application/json");
    return request;
  }
  request.method = "GET";
  request.url = session.url + "/api/workflow-runs/" + http::PercentEncode(run_id) + "/events";
  if (!last_id.empty()) request.headers.Set("Last-Event-ID", last_id);
  return request;
}

}  // namespace

void SseParser::Feed(std::string_view chunk, const std::function<void(const SseEvent&)>& on_event) {
  buffer_.append(chunk);
  size_t start = 0;
  for (size_t end; (end = buffer_.find('\n', start)) != std::string::npos; start = end + 1) {
    std::string_view line(buffer_.data() + start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) {  // the blank line that ends an event
      if (has_field_) on_event(pending_);
      pending_ = SseEvent{};
      has_field_ = false;
      has_data_ = false;
      continue;
    }
    if (line.front() == ':') continue;  // a comment (keep-alive)
    const size_t colon = line.find(':');
    const std::string_view field = line.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (field == "event") {
      pending_.type = value;
    } else if (field == "id") {
      pending_.id = value;
    } else if (field == "data") {
      if (has_data_) pending_.data += '\n';
      pending_.data += value;
      has_data_ = true;
    } else {
      continue;
    }
    has_field_ = true;
  }
  buffer_.erase(0, start);
}

std::chrono::milliseconds ReconnectDelay(int attempt) {
  const int doublings = std::clamp(attempt - 1, 0, 4);
  return std::chrono::milliseconds(500) * (1 << doublings);
}

RunStreamResult FollowRunEvents(const AevatarSession& session, const std::string& watched_run,
                                const std::string& start_body, const RunStreamSink& sink,
                                const std::function<void(std::chrono::milliseconds)>& sleep) {
  RunStreamResult result;
  std::string run_id = watched_run;
  std::string last_id;
  int failures = 0;  // attempts in a row that brought no event
  bool resuming = false;
  if (!run_id.empty()) sink.on_run_id(run_id);
  for (;;) {
    int status = 0;
    std::string error_body;
    bool got_event = false;
    SseParser parser;
    const auto on_event = [&](const SseEvent& event) {
      if (result.ended) return;
      const json data = ParsedOrNull(event.data);
      if (event.type == "run.end") {
        result.ended = true;
        result.run_status = base::StringOr(data, "status", "");
        sink.on_end(data);
        return;
      }
      if (!event.id.empty()) last_id = event.id;
      got_event = true;
      sink.on_event(event, data);
    };
    auto response = http::FetchStreaming(
        StreamRequest(session, run_id, start_body, last_id),
        [&](const http::ClientResponse& head) {
          status = head.status;
          if (status != 200) return;
          if (run_id.empty()) {
            run_id = head.headers.Get("X-Run-Id").value_or("");
            if (!run_id.empty()) sink.on_run_id(run_id);
          }
          if (resuming) {
            ++result.reconnects;
            std::cerr << "aevatar workflow: resumed " << run_id << "'s events after event "
                      << (last_id.empty() ? "0" : last_id) << " (Last-Event-ID)" << std::endl;
          }
        },
        [&](std::string_view chunk) {
          if (status != 200) {
            if (error_body.size() < kMaxErrorBody) error_body.append(chunk);
            return true;
          }
          parser.Feed(chunk, on_event);
          return !result.ended;
        });
    if (result.ended) return result;
    std::string why;
    if (!response.ok()) {
      why = std::string(response.status().message());
    } else if (status == 200) {
      why = "the stream ended before the run did";
    } else if (Retryable(status) && !run_id.empty()) {
      why = "HTTP " + std::to_string(status);
    } else {
      result.error = DescribeProblem(status, error_body);
      return result;
    }
    if (run_id.empty()) {
      result.error = "the run's stream failed before it named the run (" + why +
                     "); `aevatar workflow list` shows whether it started\n";
      return result;
    }
    failures = got_event ? 1 : failures + 1;
    if (failures > kMaxReconnects) {
      result.error = "gave up after " + std::to_string(kMaxReconnects) + " reconnects (" + why +
                     "); `aevatar workflow watch " + run_id + "` follows it again\n";
      return result;
    }
    const std::chrono::milliseconds delay = ReconnectDelay(failures);
    std::cerr << "aevatar workflow: lost " << run_id << "'s event stream (" << why
              << "); reconnecting in " << delay.count() << " ms (attempt " << failures << " of "
              << kMaxReconnects << ")" << std::endl;
    if (sleep) {
      sleep(delay);
    } else {
      std::this_thread::sleep_for(delay);
    }
    resuming = true;
  }
}

}  // namespace aevatar::cli
