#ifndef AEVATAR_HTTP_OPENAPI_H_
#define AEVATAR_HTTP_OPENAPI_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "http/message.h"
#include "http/server.h"

// A service's OpenAPI 3.1 document, served at GET /openapi.json, is kept as
// checked-in JSON files ("fragments", compiled in by cmake/openapi.cmake):
// src/http/openapi_common.json holds what every service shares (the Problem
// schema, the problem responses, the bearer scheme) and each service has one
// file per group of routes, plus an index with its "info". Adding a route
// means adding its path item to one of them; the services' coverage tests
// name any route the document lacks (docs/openapi.md).
namespace aevatar::http {

class Router;

// One file of a document: its path in the source tree (for error messages)
// and its text, a JSON object with any of "paths", "components" and other
// top-level OpenAPI members.
struct OpenApiFragment {
  std::string_view source;
  std::string_view json;
};

// Returns the OpenAPI 3.1 document (JSON text) that merges `fragments`:
// path items are merged operation by operation, components entry by entry,
// other members taken as they are. InvalidArgument naming the file when a
// fragment is not a JSON object, or when two fragments define the same
// operation, component or member.
absl::StatusOr<std::string> AssembleOpenApi(const std::vector<OpenApiFragment>& fragments);

// The OpenAPI path of a router pattern: the rest segment "{path...}" is
// "{path}" (OpenAPI has no rest parameter); every other pattern is its own path.
std::string OpenApiPathOf(std::string_view pattern);

// Returns `document` keeping only the operations `routes` (method, router
// pattern) has, and path items left with one: what a deployment without an
// optional feature (e.g. NyxID without nodes) serves. Requires a document
// from AssembleOpenApi.
std::string OpenApiForRoutes(std::string_view document,
                             const std::vector<std::pair<std::string, std::string>>& routes);

// The GET /openapi.json handler: public, application/json, the document of
// `fragments` restricted to what `router` has on the first request (so routes
// added after this handler count). A fragment that does not assemble is a
// build mistake the coverage tests catch; here it is 500 OPENAPI_INVALID.
// `router` must outlive the handler (the router owns it). Thread-safe.
Handler OpenApiHandler(const Router* router, std::vector<OpenApiFragment> fragments);

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_OPENAPI_H_
