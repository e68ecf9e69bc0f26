#ifndef AEVATAR_CHRONO_CALLER_AUTH_H_
#define AEVATAR_CHRONO_CALLER_AUTH_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/jws.h"
#include "http/message.h"
#include "sandbox/run_spec.h"

namespace aevatar::chrono {

// The header NyxID's proxy puts the delegation token in.
inline constexpr char kDelegationTokenHeader[] = "X-NyxID-Delegation-Token";

// Who is calling, as proven by the NyxID delegation token.
struct Caller {
  std::string owner;  // the token's subject; owns the operations it creates
  // The forwarded Agent Key, when Authorization carried one ("nyxid_ag_…").
  // Any other bearer is authoritative upstream but never reaches programs.
  std::optional<std::string> agent_key;
};

// Verifies X-NyxID-Delegation-Token on every protected request (fail closed):
// a compact EdDSA JWS from a key in NyxID's JWKS, aud == the configured
// audience, token_kind == "delegation", unexpired, carrying the required
// scopes. Errors are typed (401 DELEGATION_TOKEN_MISSING, TOKEN_*; 403
// TOKEN_SCOPE_MISSING). Thread-safe.
class CallerAuth {
 public:
  using NowUnix = std::function<int64_t()>;
  CallerAuth(base::KeyLookup keys, std::string audience, NowUnix now);

  absl::StatusOr<Caller> Authenticate(const http::Request& request,
                                      const std::vector<std::string>& required_scopes) const;

 private:
  base::KeyLookup keys_;
  std::string audience_;
  NowUnix now_;
};

// The program environment the server grants `caller`: NYXID_API_KEY and
// NYXID_BASE_URL for an Agent Key caller (base URL only when configured),
// nothing otherwise.
std::vector<sandbox::EnvVar> ServerEnvFor(const Caller& caller, const std::string& nyxid_base_url);

}  // namespace aevatar::chrono

#endif  // AEVATAR_CHRONO_CALLER_AUTH_H_
