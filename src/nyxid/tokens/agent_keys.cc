#include "nyxid/tokens/agent_keys.h"

#include <algorithm>

#include "base/crypto.h"

namespace aevatar::nyxid {
namespace {

constexpr size_t kShownPrefixChars = sizeof(kAgentKeyPrefix) - 1 + 4;
// base64url of 32 bytes without padding.
constexpr size_t kEncodedRandomChars = 43;

}  // namespace

NewAgentKey GenerateAgentKey(const std::string& user_id, const std::string& label,
                             const std::vector<std::string>& allowed_services, int64_t now_ms) {
  NewAgentKey key;
  key.secret =
      std::string(kAgentKeyPrefix) + base::Base64UrlEncode(base::RandomBytes(kAgentKeyRandomBytes));
  key.record.id = base::RandomId("ak_");
  key.record.user_id = user_id;
  key.record.label = label;
  key.record.key_hash_hex = AgentKeyHash(key.secret);
  key.record.key_prefix = key.secret.substr(0, kShownPrefixChars);
  key.record.allowed_services = allowed_services;
  key.record.created_at_ms = now_ms;
  return key;
}

bool LooksLikeAgentKey(std::string_view bearer) {
  const std::string_view prefix(kAgentKeyPrefix);
  if (bearer.size() != prefix.size() + kEncodedRandomChars) return false;
  if (bearer.substr(0, prefix.size()) != prefix) return false;
  return std::all_of(bearer.begin() + prefix.size(), bearer.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
  });
}

std::string AgentKeyHash(std::string_view key) { return base::Sha256Hex(key); }

bool AgentKeyAllowsRoute(const AgentKeyRecord& key, const UserService& route) {
  if (key.allowed_services.empty()) return true;
  return std::any_of(
      key.allowed_services.begin(), key.allowed_services.end(),
      [&](const std::string& entry) { return entry == route.id || entry == route.slug; });
}

}  // namespace aevatar::nyxid
