#ifndef AEVATAR_NYXID_STORE_FACTS_READS_H_
#define AEVATAR_NYXID_STORE_FACTS_READS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nyxid/model.h"

namespace aevatar::nyxid {

// The reads that authenticate a caller and resolve its route: all of tables
// whose every change moves the facts generation (NyxidStore::
// FactsGeneration), so they can be served from a cache of that generation
// (store/cached_facts.h). Lookups that find nothing return NotFound.
// Implementations are thread-safe.
class FactsReads {
 public:
  virtual ~FactsReads() = default;
  virtual absl::StatusOr<User> FindUserById(const std::string& id) = 0;
  virtual absl::StatusOr<std::vector<Membership>> MembershipsOfUser(const std::string& user_id) = 0;
  virtual absl::StatusOr<AgentKeyRecord> FindAgentKeyByHash(const std::string& key_hash_hex) = 0;
  virtual absl::StatusOr<CatalogService> FindCatalogService(const std::string& id) = 0;
  virtual absl::StatusOr<UserService> FindUserService(const std::string& id) = 0;
};

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_STORE_FACTS_READS_H_
