#include "nyxid/proxy/llm_route.h"

#include <algorithm>

#include "base/api_error.h"
#include "base/json_read.h"

namespace aevatar::nyxid {
namespace {

constexpr char kResponsesPath[] = "responses";

absl::Status InvalidRequest() {
  return base::ApiError(absl::StatusCode::kInvalidArgument, "LLM_REQUEST_INVALID",
                        "the body must be a JSON object with a non-empty string member model", 400);
}

}  // namespace

absl::Status CheckLlmRequest(const CatalogService& catalog, const http::Request& request,
                             std::string_view raw_rest) {
  if (request.method != "POST") {
    return base::ApiError(absl::StatusCode::kFailedPrecondition, "LLM_METHOD_NOT_ALLOWED",
                          "a model route accepts only POST", 405);
  }
  if (raw_rest != kResponsesPath) {
    return base::ApiError(absl::StatusCode::kNotFound, "LLM_ENDPOINT_NOT_FOUND",
                          "a model route serves only POST .../responses", 404);
  }
  auto body = base::ParseJsonObject(request.body);
  if (!body.ok()) return InvalidRequest();
  auto model = base::RequiredString(*body, "model");
  if (!model.ok() || model->empty()) return InvalidRequest();
  const std::vector<std::string>& allowed = catalog.model_allowlist;
  if (std::find(allowed.begin(), allowed.end(), *model) == allowed.end()) {
    return base::ApiError(absl::StatusCode::kPermissionDenied, "LLM_MODEL_NOT_ALLOWED",
                          "this model is not in the route's model allowlist", 403);
  }
  if (catalog.provider_api_key.empty()) {
    return base::ApiError(absl::StatusCode::kUnavailable, "LLM_PROVIDER_KEY_MISSING",
                          "the model route has no provider key configured", 503);
  }
  return absl::OkStatus();
}

http::Headers LlmUpstreamHeaders(const http::Headers& caller, const std::string& provider_key) {
  http::Headers out;
  out.Set("Content-Type", caller.Get("Content-Type").value_or("application/json"));
  if (auto accept = caller.Get("Accept")) out.Set("Accept", *accept);
  out.Set("Authorization", "Bearer " + provider_key);
  return out;
}

}  // namespace aevatar::nyxid
