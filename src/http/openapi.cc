#include "http/openapi.h"

#include <cctype>
#include <memory>
#include <set>

#include "absl/base/call_once.h"
#include "base/api_error.h"
#include "base/json_read.h"
#include "http/problem.h"
#include "http/router.h"
#include "nlohmann/json.hpp"

namespace aevatar::http {
namespace {

using nlohmann::json;

absl::Status FragmentConflict(std::string_view source, const std::string& what) {
  return absl::InvalidArgumentError(std::string(source) + ": " + what +
                                    " is already defined by another fragment");
}

// Merges `fragment` into `into`, one operation or component at a time.
absl::Status MergeFragment(const OpenApiFragment& fragment, json& into) {
  auto parsed = base::ParseJsonObject(fragment.json);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(std::string(fragment.source) + " is not a JSON object: " +
                                      std::string(parsed.status().message()));
  }
  for (auto& [key, value] : parsed->items()) {
    if (key == "paths" || key == "components") {
      if (!value.is_object()) {
        return absl::InvalidArgumentError(std::string(fragment.source) + ": " + key +
                                          " must be an object");
      }
      for (auto& [name, entries] : value.items()) {
        json& target = into[key][name];
        if (!entries.is_object()) {
          return absl::InvalidArgumentError(std::string(fragment.source) + ": " + key + "." + name +
                                            " must be an object");
        }
        for (auto& [member, definition] : entries.items()) {
          if (target.contains(member))
            return FragmentConflict(fragment.source, key + "." + name + "." + member);
          target[member] = definition;
        }
      }
      continue;
    }
    if (into.contains(key)) return FragmentConflict(fragment.source, key);
    into[key] = value;
  }
  return absl::OkStatus();
}

std::string LowerAscii(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

bool IsOperation(const std::string& member) {
  static const std::set<std::string> kMethods = {"get",     "put",  "post",  "delete",
                                                 "options", "head", "patch", "trace"};
  return kMethods.count(member) > 0;
}

}  // namespace

std::string OpenApiPathOf(std::string_view pattern) {
  std::string path(pattern);
  const size_t rest = path.rfind("...}");
  if (rest != std::string::npos && rest + 4 == path.size()) path.erase(rest, 3);
  return path;
}

absl::StatusOr<std::string> AssembleOpenApi(const std::vector<OpenApiFragment>& fragments) {
  json document = {{"openapi", "3.1.0"}, {"paths", json::object()}};
  for (const OpenApiFragment& fragment : fragments) {
    if (absl::Status merged = MergeFragment(fragment, document); !merged.ok()) return merged;
  }
  return document.dump(1);
}

std::string OpenApiForRoutes(std::string_view document,
                             const std::vector<std::pair<std::string, std::string>>& routes) {
  json parsed = json::parse(document, nullptr, false);
  if (!parsed.is_object() || !parsed.contains("paths")) return std::string(document);
  std::set<std::pair<std::string, std::string>> routed;
  for (const auto& [method, pattern] : routes)
    routed.emplace(OpenApiPathOf(pattern), LowerAscii(method));
  json kept = json::object();
  for (auto& [path, item] : parsed["paths"].items()) {
    json members = json::object();
    bool has_operation = false;
    for (auto& [member, value] : item.items()) {
      // Path-level members (parameters, summary) stay with any operation kept.
      if (!IsOperation(member)) {
        members[member] = value;
      } else if (routed.count({path, member})) {
        members[member] = value;
        has_operation = true;
      }
    }
    if (has_operation) kept[path] = members;
  }
  parsed["paths"] = kept;
  return parsed.dump(1);
}

Handler OpenApiHandler(const Router* router, std::vector<OpenApiFragment> fragments) {
  struct Served {
    absl::once_flag once;
    std::string body;  // the document, or "" when it does not assemble
    std::string error;
  };
  auto served = std::make_shared<Served>();
  return [router, served, fragments = std::move(fragments)](Request&) {
    absl::call_once(served->once, [&] {
      auto document = AssembleOpenApi(fragments);
      if (document.ok()) {
        served->body = OpenApiForRoutes(*document, router->Routes());
      } else {
        served->error = std::string(document.status().message());
      }
    });
    if (served->body.empty()) {
      return ProblemResponse(
          base::ApiError(absl::StatusCode::kInternal, "OPENAPI_INVALID",
                         "the OpenAPI document does not assemble: " + served->error, 500),
          NewDiagnosticId());
    }
    return JsonResponse(200, served->body);
  };
}

}  // namespace aevatar::http
