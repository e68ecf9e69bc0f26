#include "chrono/codex/codex_request.h"

#include "base/api_error.h"
#include "base/crypto.h"
#include "chrono/codex/codex_run_cancels.h"
#include "nlohmann/json.hpp"
#include "sandbox/validation.h"

namespace aevatar::chrono {
namespace {

using nlohmann::json;

absl::Status Invalid(std::string detail) {
  return base::ApiError(absl::StatusCode::kInvalidArgument, "CODEX_REQUEST_INVALID",
                        std::move(detail));
}

bool IsRouteIdChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == ':' || c == '-';
}

absl::StatusOr<std::string> ParseModelRoute(const json& route) {
  if (!route.is_object()) return Invalid("field 'model_route' must be an object");
  for (const auto& [name, value] : route.items()) {
    if (name != "user_service_id") {
      return Invalid("field 'model_route' has an unknown member (only user_service_id)");
    }
  }
  auto id = route.find("user_service_id");
  if (id == route.end()) return Invalid("field 'model_route.user_service_id' is required");
  if (!id->is_string()) return Invalid("field 'model_route.user_service_id' must be a string");
  const std::string& text = id->get_ref<const std::string&>();
  if (text.empty() || text.size() > kMaxUserServiceIdBytes) {
    return Invalid("field 'model_route.user_service_id' must be 1..128 characters");
  }
  for (char c : text) {
    if (!IsRouteIdChar(c)) {
      return Invalid("field 'model_route.user_service_id' has a character outside [A-Za-z0-9._:-]");
    }
  }
  return text;
}

}  // namespace

absl::StatusOr<CodexRequest> ParseCodexRequest(std::string_view body) {
  // The parser rejects invalid UTF-8 inside strings, so a prompt that parsed
  // is UTF-8.
  const json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Invalid("the body is not valid JSON (UTF-8)");
  if (!doc.is_object()) return Invalid("the body must be a JSON object");
  for (const auto& [name, value] : doc.items()) {
    if (name != "prompt" && name != "timeout_secs" && name != "model_route" && name != "run_id") {
      return Invalid(
          "the body has an unknown member (allowed: prompt, timeout_secs, model_route, run_id)");
    }
  }
  CodexRequest request;
  auto prompt = doc.find("prompt");
  if (prompt == doc.end()) return Invalid("field 'prompt' is required");
  if (!prompt->is_string()) return Invalid("field 'prompt' must be a string");
  request.prompt = prompt->get<std::string>();
  if (request.prompt.empty() || request.prompt.size() > kMaxCodexPromptBytes) {
    return Invalid("field 'prompt' must be 1..65536 bytes");
  }
  if (auto timeout = doc.find("timeout_secs"); timeout != doc.end()) {
    if (!timeout->is_number_integer()) return Invalid("field 'timeout_secs' must be an integer");
    const bool in_range =
        timeout->is_number_unsigned()
            ? timeout->get<uint64_t>() <= static_cast<uint64_t>(sandbox::kMaxWallTimeoutSecs)
            : timeout->get<int64_t>() >= sandbox::kMinWallTimeoutSecs &&
                  timeout->get<int64_t>() <= sandbox::kMaxWallTimeoutSecs;
    if (!in_range || timeout->get<int64_t>() < sandbox::kMinWallTimeoutSecs) {
      return Invalid("field 'timeout_secs' must be 1..600");
    }
    request.timeout_secs = timeout->get<int>();
  }
  auto route = doc.find("model_route");
  if (route == doc.end()) return Invalid("field 'model_route' is required");
  auto id = ParseModelRoute(*route);
  if (!id.ok()) return id.status();
  request.user_service_id = std::move(*id);
  if (auto run_id = doc.find("run_id"); run_id != doc.end()) {
    if (!run_id->is_string() || !IsCodexRunId(run_id->get_ref<const std::string&>())) {
      return Invalid("field 'run_id' must be 1..64 characters of [A-Za-z0-9_-]");
    }
    request.run_id = run_id->get<std::string>();
  }
  return request;
}

std::string CodexRequestFingerprint(const CodexRequest& request) {
  const json canonical = {
      {"prompt", request.prompt},
      {"timeout_secs", request.timeout_secs},
      {"model_route", {{"user_service_id", request.user_service_id}}},
  };
  return base::Sha256Hex(canonical.dump());
}

}  // namespace aevatar::chrono
