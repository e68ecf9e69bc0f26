#ifndef AEVATAR_BASE_LOG_CONTEXT_H_
#define AEVATAR_BASE_LOG_CONTEXT_H_

// What base::Log (log.h) adds to every line beyond its arguments: the line
// shape chosen by the operator and the request being handled.
//
// In the default json format a line is
//   {"ts":"…","level":"info","event":"…","tag":"…","request_id":"…", <fields>}
// (request_id while a request is being handled on the writing thread; a
// failing request's http.request line carries its diagnostic_id among the
// fields). The text format writes the same content for a terminal:
//   2026-12-02T14:00:00.000Z info http.request request_id=req_… route=/x status=200
// with values holding spaces, quotes or '=' JSON-quoted. Either format passes
// through Redact() (log.h).

#include <string>

namespace aevatar::base {

// The shape of a line (--log-format): kJson (default) or kText.
enum class LogFormat { kJson, kText };

// Sets the line shape for every later line. Thread-safe.
void SetLogFormat(LogFormat format);

// While alive, lines written on this thread carry `request_id` (and
// CurrentRequestId() returns it). Not copyable; nests (the inner id wins,
// the outer returns when the inner scope ends).
class ScopedRequestId {
 public:
  explicit ScopedRequestId(std::string request_id);
  ~ScopedRequestId();
  ScopedRequestId(const ScopedRequestId&) = delete;
  ScopedRequestId& operator=(const ScopedRequestId&) = delete;

 private:
  std::string previous_;
};

// The request id of the request this thread is handling ("" when none).
const std::string& CurrentRequestId();

}  // namespace aevatar::base

#endif  // AEVATAR_BASE_LOG_CONTEXT_H_
