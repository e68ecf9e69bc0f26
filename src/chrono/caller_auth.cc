#include "chrono/caller_auth.h"

#include "absl/strings/match.h"
#include "base/api_error.h"

namespace aevatar::chrono {
namespace {

constexpr char kAgentKeyPrefix[] = "nyxid_ag_";

}  // namespace

CallerAuth::CallerAuth(base::KeyLookup keys, std::string audience, NowUnix now)
    : keys_(std::move(keys)), audience_(std::move(audience)), now_(std::move(now)) {}

absl::StatusOr<Caller> CallerAuth::Authenticate(
    const http::Request& request, const std::vector<std::string>& required_scopes) const {
  auto token = request.headers.Get(kDelegationTokenHeader);
  if (!token || token->empty()) {
    return base::ApiError(absl::StatusCode::kUnauthenticated, "DELEGATION_TOKEN_MISSING",
                          "X-NyxID-Delegation-Token is required", 401);
  }
  auto verified = base::VerifyJws(*token, keys_);
  if (!verified.ok()) return verified.status();
  base::ClaimRequirements requirements;
  requirements.audience = audience_;
  requirements.token_kind = "delegation";
  requirements.required_scopes = required_scopes;
  requirements.now_unix = now_();
  if (absl::Status st = base::VerifyClaims(verified->claims, requirements); !st.ok()) return st;

  const nlohmann::json& claims = verified->claims;
  auto sub = claims.find("sub");
  if (sub == claims.end() || !sub->is_string() || sub->get<std::string>().empty()) {
    return base::ApiError(absl::StatusCode::kUnauthenticated, "TOKEN_MALFORMED",
                          "the delegation token has no subject", 401);
  }
  Caller caller;
  caller.owner = sub->get<std::string>();
  if (auto bearer = http::BearerToken(request);
      bearer && absl::StartsWith(*bearer, kAgentKeyPrefix)) {
    caller.agent_key = *bearer;
  }
  return caller;
}

std::vector<sandbox::EnvVar> ServerEnvFor(const Caller& caller, const std::string& nyxid_base_url) {
  std::vector<sandbox::EnvVar> env;
  if (!caller.agent_key) return env;
  env.push_back({"NYXID_API_KEY", *caller.agent_key});
  if (!nyxid_base_url.empty()) env.push_back({"NYXID_BASE_URL", nyxid_base_url});
  return env;
}

}  // namespace aevatar::chrono
