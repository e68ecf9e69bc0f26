#include "aevatar/tools/code_execute.h"

#include <cctype>

#include "absl/strings/match.h"
#include "aevatar/admission/admission_cache.h"
#include "aevatar/admission/route_admission.h"
#include "aevatar/clients/execution_replies.h"
#include "aevatar/clients/nyxid_route_writer.h"
#include "base/api_error.h"
#include "base/json_read.h"
#include "base/log.h"
#include "base/problem_json.h"
#include "sandbox/runtime_name.h"

namespace aevatar::orchestrator {
namespace {

constexpr const char* kLanguages[] = {"python", "javascript", "typescript", "bash"};
// Time the proxy and executor may add to the program's own timeout.
constexpr int kExecuteMarginSecs = 30;

absl::Status BadRequest(const char* code, std::string detail) {
  return base::ApiError(absl::StatusCode::kInvalidArgument, code, std::move(detail));
}

bool ValidEnvName(const std::string& name) {
  if (name.empty() || name.size() > 128) return false;
  if (!(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return !absl::StartsWithIgnoreCase(name, "NYXID_") && !absl::StartsWith(name, "LD_");
}

http::Headers FactsDigestHeaders(const std::string& facts_digest) {
  http::Headers headers;
  headers.Set(kFactsDigestHeader, facts_digest);
  return headers;
}

// NyxID's own refusal of a reused admission (an upstream's X-NyxID-* fields
// never reach us: the proxy drops them).
bool IsFactsChanged(const NyxidReply& reply) {
  return reply.status == 412 && reply.headers.Get(kFactsChangedHeader).has_value() &&
         base::StringOr(reply.body, "code", "") == "NYXID_FACTS_CHANGED";
}

}  // namespace

absl::StatusOr<CodeExecuteArgs> ParseCodeExecuteArgs(std::string_view body) {
  nlohmann::json json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return BadRequest("MALFORMED_JSON", "the body is not valid JSON");
  if (!json.is_object()) return BadRequest("INVALID_REQUEST", "the body must be a JSON object");
  CodeExecuteArgs args;
  auto language = json.find("language");
  if (language == json.end() || !language->is_string()) {
    return BadRequest("INVALID_FIELD_TYPE", "field 'language' must be a string");
  }
  args.language = language->get<std::string>();
  bool known = false;
  for (const char* name : kLanguages) known = known || args.language == name;
  if (!known) {
    return BadRequest("UNSUPPORTED_LANGUAGE",
                      "field 'language' must be one of python, javascript, typescript, bash");
  }
  auto source = json.find("source");
  if (source == json.end() || source->is_null()) {
    return BadRequest("SOURCE_MISSING", "field 'source' is required");
  }
  if (!source->is_string())
    return BadRequest("INVALID_FIELD_TYPE", "field 'source' must be a string");
  args.source = source->get<std::string>();
  if (args.source.empty()) return BadRequest("SOURCE_MISSING", "field 'source' is empty");
  if (auto runtime = json.find("runtime"); runtime != json.end() && !runtime->is_null()) {
    if (!runtime->is_string()) {
      return BadRequest("INVALID_FIELD_TYPE", "field 'runtime' must be a string");
    }
    args.runtime = runtime->get<std::string>();
    // The executor's own rule, so a name it would refuse never travels.
    if (!sandbox::ValidateRuntimeName(args.runtime).ok()) {
      return BadRequest("UNKNOWN_RUNTIME",
                        "field 'runtime' must be a runtime's name (1-64 of a-z 0-9 . _ -); leave "
                        "it out for the language's default");
    }
  }
  if (auto timeout = json.find("timeout_secs"); timeout != json.end() && !timeout->is_null()) {
    if (!timeout->is_number_integer()) {
      return BadRequest("INVALID_FIELD_TYPE", "field 'timeout_secs' must be an integer");
    }
    const int64_t secs = timeout->get<int64_t>();
    if (secs < 1 || secs > 600) {
      return BadRequest("INVALID_TIMEOUT", "field 'timeout_secs' must be between 1 and 600");
    }
    args.timeout_secs = static_cast<int>(secs);
  }
  if (auto in = json.find("stdin"); in != json.end() && !in->is_null()) {
    if (!in->is_string()) return BadRequest("INVALID_FIELD_TYPE", "field 'stdin' must be a string");
    args.stdin_data = in->get<std::string>();
  }
  if (auto env = json.find("env"); env != json.end() && !env->is_null()) {
    if (!env->is_object()) return BadRequest("INVALID_FIELD_TYPE", "field 'env' must be an object");
    for (const auto& [name, value] : env->items()) {
      if (!value.is_string()) return BadRequest("INVALID_ENV", "env values must be strings");
      if (!ValidEnvName(name)) {
        return BadRequest("INVALID_ENV",
                          "env names must match [A-Za-z_][A-Za-z0-9_]* and not start with "
                          "NYXID_ or LD_");
      }
      args.env[name] = value.get<std::string>();
    }
  }
  return args;
}

nlohmann::json ExecutorRequestBody(const CodeExecuteArgs& args) {
  nlohmann::json body = {
      {"language", args.language}, {"script", args.source}, {"timeout_secs", args.timeout_secs}};
  if (!args.runtime.empty()) body["runtime"] = args.runtime;
  if (!args.stdin_data.empty()) body["stdin"] = args.stdin_data;
  if (!args.env.empty()) body["env"] = args.env;
  return body;
}

absl::Status UpstreamError(const NyxidReply& reply) {
  if (reply.status == 0) {
    return base::ApiError(absl::StatusCode::kUnavailable, "EXECUTOR_UNREACHABLE",
                          "the executor could not be reached through NyxID", 502);
  }
  // Only a plain token is kept: the code is the peer's claim.
  std::string code = base::ProblemCodeOf(reply.body);
  if (code.empty()) code = "EXECUTOR_ERROR";
  return base::ApiError(absl::StatusCode::kUnavailable, code,
                        "the executor route answered HTTP " + std::to_string(reply.status),
                        reply.status);
}

absl::StatusOr<nlohmann::json> ExecuteInteractive(const NyxidClient& nyxid, const Caller& caller,
                                                  const CodeExecuteArgs& args,
                                                  const std::string& chrono_catalog_id,
                                                  const std::string& diagnostic_id,
                                                  AdmissionCache* admissions) {
  const std::string body = ExecutorRequestBody(args).dump();
  const auto timeout = std::chrono::seconds(args.timeout_secs + kExecuteMarginSecs);
  if (admissions != nullptr) {
    if (auto reused = admissions->Find(caller.credential)) {
      NyxidReply reply = nyxid.Proxy(caller.credential, "POST", reused->route.slug, "execute",
                                     reused->route.user_service_id, body,
                                     FactsDigestHeaders(reused->facts_digest), timeout);
      // NyxID refused before forwarding: nothing ran, so admitting afresh
      // and sending once more cannot run the source twice. A credential
      // refused outright is not reused either (and not re-sent).
      const bool changed = IsFactsChanged(reply);
      if (changed || reply.status == 401 || reply.status == 403) {
        admissions->Forget(caller.credential, reused->facts_digest);
      }
      if (!changed) return InteractiveResult(reply, diagnostic_id);
    }
  }
  std::string facts_digest;
  auto route = AdmitCodeExecutionRoute(nyxid, caller, chrono_catalog_id,
                                       /*fresh_admission=*/true, diagnostic_id,
                                       /*observed=*/nullptr, &facts_digest);
  if (!route.ok()) return route.status();
  if (admissions != nullptr) admissions->Remember(caller.credential, {*route, facts_digest});
  NyxidReply reply = nyxid.Proxy(caller.credential, "POST", route->slug, "execute",
                                 route->user_service_id, body, {}, timeout);
  return InteractiveResult(reply, diagnostic_id);
}

absl::StatusOr<nlohmann::json> InteractiveResult(const NyxidReply& reply,
                                                 const std::string& diagnostic_id) {
  if (reply.status != 200) return UpstreamError(reply);
  auto result = ParseExecutionResult(reply.body);
  if (!result.ok()) {
    // The message names the field that broke the contract, never its value.
    base::Log(
        base::LogLevel::kWarn, "code_execute.response_invalid", diagnostic_id,
        {{"diagnostic_id", diagnostic_id}, {"error", std::string(result.status().message())}});
    return result.status();
  }
  return nlohmann::json{
      {"stdout", result->stdout_text},
      {"stderr", result->stderr_text},
      {"exit_code", result->exit_code.value_or(-1)},
      {"verdict", result->verdict},
      {"success", result->success},
      {"timed_out", result->timed_out},
      {"execution_time_ms", result->execution_time_ms.value_or(0)},
      {"stdout_truncated", result->stdout_truncated},
      {"stderr_truncated", result->stderr_truncated},
      {"diagnostic_id", diagnostic_id},
  };
}

}  // namespace aevatar::orchestrator
