#ifndef AEVATAR_DOUBLES_RESPONSES_DOUBLE_H_
#define AEVATAR_DOUBLES_RESPONSES_DOUBLE_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

// responses-double: a TEST DOUBLE of an OpenAI Responses-API model provider,
// for the tests and the offline demo (no real model can be reached here).
// It serves `POST …/responses` as server-sent events and follows the script
// of responses_script.h; operators point the chrono-llm-public route at a
// real provider instead.
namespace aevatar::doubles {

struct ResponsesDoubleOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0 picks a free port
  // When non-empty, every request must carry "Authorization: Bearer <api_key>"
  // (401 otherwise), as a provider checks its key.
  std::string api_key;
  // When non-empty, one JSON line per request is appended here:
  // {"path", "authorization", "body"}, so tests can see what reached the
  // provider.
  std::string record_path;
  std::chrono::milliseconds slow_gap{300};  // between events in [double:slow]
  std::chrono::seconds hang_limit{600};     // a [double:hang] stream ends after this
};

class ResponsesDouble {
 public:
  static absl::StatusOr<std::unique_ptr<ResponsesDouble>> Start(
      const ResponsesDoubleOptions& options);
  virtual ~ResponsesDouble() = default;
  virtual uint16_t port() const = 0;
  // Requests answered so far (any outcome).
  virtual int requests() const = 0;
  // Ends hanging streams and stops the server; idempotent.
  virtual void Stop() = 0;
};

}  // namespace aevatar::doubles

#endif  // AEVATAR_DOUBLES_RESPONSES_DOUBLE_H_
