#include "http/router.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_join.h"
#include "base/api_error.h"
#include "base/log_context.h"
#include "http/problem.h"
#include "http/request_id.h"

namespace aevatar::http {
namespace {

// Segment kinds, ordered by how specific they are: when two patterns match
// the same path, the one with the more specific segment first wins, so
// "/executions/stats" beats "/executions/{id}" whatever the order of Add().
enum SegmentKind { kRest = 0, kParam = 1, kLiteral = 2 };

SegmentKind KindOf(std::string_view segment) {
  if (segment.size() >= 2 && segment.front() == '{' && segment.back() == '}') {
    return segment.ends_with("...}") ? kRest : kParam;
  }
  return kLiteral;
}

// Name inside "{name}" or "{name...}".
std::string ParamName(std::string_view segment) {
  segment.remove_prefix(1);
  segment.remove_suffix(segment.ends_with("...}") ? 4 : 1);
  return std::string(segment);
}

// "/a/b" -> {"a", "b"}; "/" -> {""}; "/a/" -> {"a", ""}. Empty segments are
// kept so that "/a/" and "/a" stay distinct paths.
std::vector<std::string> SplitPath(std::string_view path) {
  if (path.starts_with('/')) path.remove_prefix(1);
  std::vector<std::string> segments;
  while (true) {
    size_t slash = path.find('/');
    segments.emplace_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return segments;
}

struct Match {
  std::map<std::string, std::string> params;
  std::vector<int> score;  // SegmentKind per matched pattern segment
};

// Whether already-split `path` matches `pattern`; a final {name...} takes the
// rest of the path (zero or more segments). Allocates nothing: every request
// is tried against every route, and most fail on their first literal.
bool Matches(const std::vector<std::string>& pattern, const std::vector<std::string>& path) {
  for (size_t i = 0; i < pattern.size(); ++i) {
    const SegmentKind kind = KindOf(pattern[i]);
    if (kind == kRest) return true;
    if (i >= path.size()) return false;
    if (kind == kLiteral ? pattern[i] != path[i] : path[i].empty()) {
      return false;  // "{id}" never matches ""
    }
  }
  return path.size() == pattern.size();
}

// The parameters and the score of a `pattern` that Matches `path`.
Match Bind(const std::vector<std::string>& pattern, const std::vector<std::string>& path) {
  Match match;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const SegmentKind kind = KindOf(pattern[i]);
    match.score.push_back(kind);
    if (kind == kRest) {
      std::vector<std::string> rest;
      if (i < path.size()) rest.assign(path.begin() + static_cast<ptrdiff_t>(i), path.end());
      match.params[ParamName(pattern[i])] = absl::StrJoin(rest, "/");
    } else if (kind == kParam) {
      match.params[ParamName(pattern[i])] = path[i];
    }
  }
  return match;
}

}  // namespace

void Router::Add(std::string method, std::string pattern, Handler handler) {
  std::vector<std::string> segments = SplitPath(pattern);
  for (size_t i = 0; i + 1 < segments.size(); ++i) {
    // A rest segment anywhere but last is a programming error in the service.
    assert(KindOf(segments[i]) != kRest && "{name...} must be the final segment");
  }
  routes_.push_back(
      Route{std::move(method), std::move(pattern), std::move(segments), std::move(handler)});
}

std::vector<std::pair<std::string, std::string>> Router::Routes() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Route& route : routes_) out.emplace_back(route.method, route.pattern);
  return out;
}

// Gives the request its request id (request_id.h) for the handler's log
// lines and the X-Request-Id response header, then dispatches it.
Response Router::Handle(Request& request) const {
  // The most specific of the routes offered (literal segments outrank
  // {name}, which outranks {name...}).
  struct Candidate {
    const Route* route = nullptr;
    Match match;
    void Offer(const Route& offered, const std::vector<std::string>& path) {
      Match offered_match = Bind(offered.segments, path);
      if (route == nullptr || offered_match.score > match.score) {
        route = &offered;
        match = std::move(offered_match);
      }
    }
  };
  std::string request_id = RequestIdOf(request);
  base::ScopedRequestId scope(request_id);
  Response response = [&]() -> Response {
    std::vector<std::string> path = SplitPath(request.path);
    // The best route of the request's method, and for a HEAD request the
    // best GET one: HEAD falls back to the GET handler of a path that has
    // no HEAD route (the server drops the body).
    Candidate exact;
    Candidate get_for_head;
    std::vector<std::string> allowed;
    for (const Route& route : routes_) {
      if (!Matches(route.segments, path)) continue;
      if (std::find(allowed.begin(), allowed.end(), route.method) == allowed.end()) {
        allowed.push_back(route.method);
      }
      if (route.method == request.method) {
        exact.Offer(route, path);
      } else if (request.method == "HEAD" && route.method == "GET") {
        get_for_head.Offer(route, path);
      }
    }
    Candidate& chosen = exact.route != nullptr ? exact : get_for_head;
    if (chosen.route != nullptr) {
      request.path_params = std::move(chosen.match.params);
      return chosen.route->handler(request);
    }
    if (allowed.empty()) {
      return ProblemResponse(
          base::ApiError(absl::StatusCode::kNotFound, "NOT_FOUND", "no resource at this path"),
          NewDiagnosticId());
    }
    if (std::find(allowed.begin(), allowed.end(), "GET") != allowed.end() &&
        std::find(allowed.begin(), allowed.end(), "HEAD") == allowed.end()) {
      allowed.push_back("HEAD");
    }
    Response response = ProblemResponse(
        base::ApiError(absl::StatusCode::kInvalidArgument, "METHOD_NOT_ALLOWED",
                       "method " + request.method + " is not allowed on this path", 405),
        NewDiagnosticId());
    response.headers.Set("Allow", absl::StrJoin(allowed, ", "));
    return response;
  }();
  response.headers.Set("X-Request-Id", request_id);
  if (response.stream) {
    // A streamed body is produced after Handle returns: its lines keep the id.
    response.stream = [request_id, inner = std::move(response.stream)](const ChunkWriter& write) {
      base::ScopedRequestId stream_scope(request_id);
      inner(write);
    };
  }
  return response;
}

}  // namespace aevatar::http
