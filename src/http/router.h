#ifndef AEVATAR_HTTP_ROUTER_H_
#define AEVATAR_HTTP_ROUTER_H_

#include <string>
#include <utility>
#include <vector>

#include "http/server.h"

namespace aevatar::http {

// Maps method + path pattern to a handler. Patterns are literal segments and
// {name} segments ("/executions/{id}/result"); a final "{name...}" segment
// matches the rest of the path ("/api/v1/proxy/{slug}/{path...}"). Matched
// values land in Request::path_params. An unknown path is 404 NOT_FOUND, a
// known path with another method 405 METHOD_NOT_ALLOWED (with Allow), both as
// problem+json. Build it before serving; Handle() is then thread-safe.
class Router {
 public:
  void Add(std::string method, std::string pattern, Handler handler);
  // Dispatches `request`; usable directly as a Server handler.
  Response Handle(Request& request) const;
  // Every (method, pattern) added, in order: for tests that must cover each
  // route (the adversarial matrix) and for documents that list them.
  std::vector<std::pair<std::string, std::string>> Routes() const;

 private:
  struct Route {
    std::string method;
    std::string pattern;
    std::vector<std::string> segments;
    Handler handler;
  };
  std::vector<Route> routes_;
};

}  // namespace aevatar::http

#endif  // AEVATAR_HTTP_ROUTER_H_
