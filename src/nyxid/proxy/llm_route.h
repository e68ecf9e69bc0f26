#ifndef AEVATAR_NYXID_PROXY_LLM_ROUTE_H_
#define AEVATAR_NYXID_PROXY_LLM_ROUTE_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "http/message.h"
#include "nyxid/model.h"

// The proxy's rules for a route whose catalog service is of kind llm (the
// chrono-llm-public model route), as pure functions of the request.
//
// Such a route carries one thing only: a model call to the provider's
// Responses API, `POST /api/v1/proxy/{slug}/responses`, made by Codex inside
// a managed run (through chrono-sandbox's relay, with its delegation token),
// or by any caller holding an access token, an Agent Key or a delegation
// token with proxy:*. The caller's credential opens the route; the provider
// only ever sees the operator's key:
//   - method POST only (405 LLM_METHOD_NOT_ALLOWED);
//   - path `responses` only (404 LLM_ENDPOINT_NOT_FOUND), forwarded to
//     `{base_url}/responses` without the caller's query string;
//   - the body is a JSON object whose `model` is a non-empty string
//     (400 LLM_REQUEST_INVALID) in the catalog's model_allowlist
//     (403 LLM_MODEL_NOT_ALLOWED; an empty allowlist refuses every model);
//   - upstream headers are Content-Type, Accept and
//     `Authorization: Bearer <provider key>`, nothing else of the caller's:
//     no Authorization, no X-NyxID-* (delegation or forwarded tokens), no
//     cookie, whatever the route's credential policy says.
// Error details never quote the body, the model or a credential.
namespace aevatar::nyxid {

// Checks `request` (`raw_rest`: the still-encoded path after the slug)
// against `catalog`'s rules above. OK when it may be forwarded.
absl::Status CheckLlmRequest(const CatalogService& catalog, const http::Request& request,
                             std::string_view raw_rest);

// The headers an llm upstream gets for `caller`'s request. Requires a
// non-empty `provider_key`.
http::Headers LlmUpstreamHeaders(const http::Headers& caller, const std::string& provider_key);

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_PROXY_LLM_ROUTE_H_
