#ifndef AEVATAR_NYXID_TOKENS_AGENT_KEYS_H_
#define AEVATAR_NYXID_TOKENS_AGENT_KEYS_H_

#include <string>
#include <string_view>
#include <vector>

#include "nyxid/model.h"

namespace aevatar::nyxid {

// Agent Key format: "nyxid_ag_" + base64url(32 random bytes) (43 characters,
// no padding). The key is shown once, at creation; the store keeps only
// SHA-256(key) in hex (a 256-bit random secret needs no slow hash) and a
// short prefix so a user can recognise a key in a list.
inline constexpr char kAgentKeyPrefix[] = "nyxid_ag_";
inline constexpr size_t kAgentKeyRandomBytes = 32;

struct NewAgentKey {
  std::string secret;  // the whole key; return it to the creator once, never log it
  AgentKeyRecord record;
};

// Generates a key for `user_id`. `allowed_services` are UserService ids or
// slugs (empty: every route the user may use).
NewAgentKey GenerateAgentKey(const std::string& user_id, const std::string& label,
                             const std::vector<std::string>& allowed_services, int64_t now_ms);

// True when `bearer` has the Agent Key shape (prefix and length).
bool LooksLikeAgentKey(std::string_view bearer);

// The stored form of a key: lowercase hex SHA-256.
std::string AgentKeyHash(std::string_view key);

// True when `key` may be used on `route` (its allowed_services list is empty,
// or names the route's id or slug).
bool AgentKeyAllowsRoute(const AgentKeyRecord& key, const UserService& route);

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_TOKENS_AGENT_KEYS_H_
