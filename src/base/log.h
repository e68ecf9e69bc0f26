#ifndef AEVATAR_BASE_LOG_H_
#define AEVATAR_BASE_LOG_H_

#include <string>
#include <string_view>

#include "nlohmann/json.hpp"

namespace aevatar::base {

// One JSON-lines logger for every binary. Each line is
//   {"ts":"…","level":"info","event":"…","tag":"…", <fields>}
// and passes through Redact() before it is written, so a token, key or
// delegation token that slipped into a field is masked. Callers still must not
// log source code, idempotency keys or route ids: redaction is the last line of
// defence, not the policy.
//
// Thread-safe: lines are written whole with one write(2).

enum class LogLevel { kDebug, kInfo, kWarn, kError };

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
