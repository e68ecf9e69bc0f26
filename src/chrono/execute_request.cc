#include "chrono/execute_request.h"

#include <algorithm>

#include "base/api_error.h"
#include "sandbox/validation.h"

namespace aevatar::chrono {
namespace {

absl::Status BadRequest(const char* code, std::string detail) {
  return base::ApiError(absl::StatusCode::kInvalidArgument, code, std::move(detail));
}

absl::Status WrongType(const char* field, const char* expected) {
  return BadRequest("INVALID_FIELD_TYPE", std::string("field '") + field + "' must be " + expected);
}

// `runtimes` null: the runtime's name is not checked (a stored request).
absl::StatusOr<ExecuteRequest> Parse(std::string_view body,
                                     const std::vector<sandbox::RuntimeEnv>* runtimes) {
  nlohmann::json json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return BadRequest("MALFORMED_JSON", "the body is not valid JSON");
  if (!json.is_object()) return BadRequest("INVALID_REQUEST", "the body must be a JSON object");

  ExecuteRequest request;
  auto language = json.find("language");
  if (language == json.end() || language->is_null()) {
    return BadRequest("LANGUAGE_MISSING", "field 'language' is required");
  }
  if (!language->is_string()) return WrongType("language", "a string");
  auto parsed = sandbox::ParseLanguage(language->get<std::string>());
  if (!parsed) {
    return BadRequest("UNSUPPORTED_LANGUAGE",
                      "field 'language' must be one of python, javascript, typescript, bash");
  }
  request.language = *parsed;

  auto script = json.find("script");
  if (script == json.end() || script->is_null()) {
    return BadRequest("SCRIPT_MISSING", "field 'script' is required");
  }
  if (!script->is_string()) return WrongType("script", "a string");
  request.script = script->get<std::string>();
  if (request.script.empty()) return BadRequest("SCRIPT_MISSING", "field 'script' is empty");

  if (auto runtime = json.find("runtime"); runtime != json.end() && !runtime->is_null()) {
    if (!runtime->is_string()) return WrongType("runtime", "a string");
    request.runtime = runtime->get<std::string>();
    if (request.runtime.empty()) {
      return BadRequest("UNKNOWN_RUNTIME",
                        "field 'runtime' is empty; leave it out for the language's default");
    }
    if (runtimes != nullptr) {
      auto env = sandbox::ResolveRuntime(*runtimes, request.language, request.runtime);
      if (!env.ok()) return env.status();
    }
  }

  if (auto in = json.find("stdin"); in != json.end() && !in->is_null()) {
    if (!in->is_string()) return WrongType("stdin", "a string");
    request.stdin_data = in->get<std::string>();
  }

  if (auto timeout = json.find("timeout_secs"); timeout != json.end() && !timeout->is_null()) {
    if (!timeout->is_number_integer()) return WrongType("timeout_secs", "an integer");
    const int64_t secs = timeout->get<int64_t>();
    if (secs < sandbox::kMinWallTimeoutSecs || secs > sandbox::kMaxWallTimeoutSecs) {
      return BadRequest("INVALID_TIMEOUT", "field 'timeout_secs' must be between 1 and 600");
    }
    request.timeout_secs = static_cast<int>(secs);
  }

  if (auto env = json.find("env"); env != json.end() && !env->is_null()) {
    if (!env->is_object()) return WrongType("env", "an object of strings");
    for (const auto& [name, value] : env->items()) {
      if (!value.is_string()) return WrongType("env", "an object of strings");
      request.env.push_back({name, value.get<std::string>()});
    }
    if (absl::Status st = sandbox::ValidateCallerEnv(request.env); !st.ok()) {
      return BadRequest("INVALID_ENV", std::string(st.message()));
    }
  }
  return request;
}

}  // namespace

absl::StatusOr<ExecuteRequest> ParseExecuteRequest(
    std::string_view body, const std::vector<sandbox::RuntimeEnv>& runtimes) {
  return Parse(body, &runtimes);
}

std::string CanonicalRequestJson(const ExecuteRequest& request) {
  nlohmann::json env = nlohmann::json::object();
  for (const auto& var : request.env) env[var.name] = var.value;
  // nlohmann::json objects keep keys sorted, so dump() is canonical.
  nlohmann::json json = {
      {"language", sandbox::LanguageName(request.language)},
      {"script", request.script},
      {"stdin", request.stdin_data},
      {"env", env},
      {"timeout_secs", request.timeout_secs},
  };
  if (!request.runtime.empty()) json["runtime"] = request.runtime;
  return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

absl::StatusOr<ExecuteRequest> ParseCanonicalRequest(std::string_view canonical) {
  return Parse(canonical, nullptr);
}

sandbox::RunSpec ToRunSpec(const ExecuteRequest& request) {
  sandbox::RunSpec spec;
  spec.language = request.language;
  spec.runtime = request.runtime;
  spec.source = request.script;
  spec.stdin_data = request.stdin_data;
  spec.env = request.env;
  spec.limits.wall_timeout_secs = request.timeout_secs;
  return spec;
}

}  // namespace aevatar::chrono
