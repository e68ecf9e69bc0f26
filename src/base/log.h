#ifndef AEVATAR_BASE_LOG_H_
#define AEVATAR_BASE_LOG_H_

#include <string>
#include <string_view>

#include "nlohmann/json.hpp"

namespace aevatar::base {

// One logger for every binary, one event per line. In the default json
// format each line is
//   {"ts":"…","level":"info","event":"…","tag":"…","request_id":"…", <fields>}
// (request_id when the line is written while a request is being handled,
// see ScopedRequestId; a failing request's line carries its diagnostic_id
// among the fields). The text format writes the same content as
//   2026-12-02T14:00:00.000Z info http.request request_id=req_… route=/x status=200
// Every line, in either format,
// and passes through Redact() before it is written, so a token, key or
// delegation token that slipped into a field is masked. Callers still must not
// log source code, idempotency keys or route ids: redaction is the last line of
// defence, not the policy.
//
// Thread-safe: lines are written whole with one write(2).

enum class LogLevel { kDebug, kInfo, kWarn, kError };

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

// Sets the minimum level written (default kInfo) and the fd (default 2).
void ConfigureLog(LogLevel min_level, int fd);

// Writes one line. `tag` is the per-request or per-operation tag ("" for none).
void Log(LogLevel level, std::string_view event, std::string_view tag,
         const nlohmann::json& fields = nlohmann::json::object());

// Returns `text` with credential-shaped substrings masked: NyxID agent keys
// (nyxid_ag_…), bearer credentials, and compact JWS/JWT strings (eyJ….….…).
std::string Redact(std::string_view text);

}  // namespace aevatar::base

#endif  // AEVATAR_BASE_LOG_H_
