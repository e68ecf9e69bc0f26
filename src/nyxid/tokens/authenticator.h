#ifndef AEVATAR_NYXID_TOKENS_AUTHENTICATOR_H_
#define AEVATAR_NYXID_TOKENS_AUTHENTICATOR_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "http/message.h"
#include "nyxid/accounts/principal.h"
#include "nyxid/store/nyxid_store.h"
#include "nyxid/tokens/token_service.h"

namespace aevatar::nyxid {

// Turns `Authorization: Bearer …` into a Principal (fail closed). Accepts a
// human access token, an Agent Key, or a delegation token this broker
// minted; anything else is a typed 401:
//   CREDENTIAL_MISSING, AGENT_KEY_INVALID, AGENT_KEY_REVOKED, TOKEN_* (see
//   TokenService::Verify), ACCOUNT_UNKNOWN (the subject no longer exists).
// Thread-safe.
class Authenticator {
 public:
  Authenticator(NyxidStore* store, const TokenService* tokens) : store_(store), tokens_(tokens) {}

  absl::StatusOr<Principal> Authenticate(const http::Request& request) const;
  absl::StatusOr<Principal> AuthenticateBearer(std::string_view bearer) const;
  // The same, with the account, memberships and Agent Key read through
  // `reads` (e.g. store/cached_facts.h) rather than the store.
  absl::StatusOr<Principal> Authenticate(const http::Request& request, FactsReads& reads) const;

 private:
  absl::StatusOr<Principal> AuthenticateBearer(std::string_view bearer, FactsReads& reads) const;
  static absl::StatusOr<Principal> ForUser(const std::string& user_id, FactsReads& reads);

  NyxidStore* store_;
  const TokenService* tokens_;
};

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_TOKENS_AUTHENTICATOR_H_
