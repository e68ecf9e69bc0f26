#ifndef AEVATAR_NYXID_API_ADMIN_AUDIT_H_
#define AEVATAR_NYXID_API_ADMIN_AUDIT_H_

#include <string>

#include "nlohmann/json.hpp"
#include "nyxid/store/nyxid_store.h"

// Recording administrative changes in the append-only admin audit log
// (`nyxid audit list`, GET /api/v1/admin/audit, platform admins only).
namespace aevatar::nyxid {

// The actor of changes made by the operator's bootstrap file.
inline constexpr char kBootstrapActor[] = "bootstrap";

// Appends one entry stamped now. The change it records is already
// committed, so a failure to append is logged (nyxid.admin_audit_failed),
// never turned into a failure of the change. `detail` holds names, ids and
// flags only: never a password, key, token or secret.
void RecordAdminAction(NyxidStore& store, const std::string& actor, const std::string& action,
                       const std::string& target_type, const std::string& target_id,
                       const nlohmann::json& detail = nlohmann::json::object());

}  // namespace aevatar::nyxid

#endif  // AEVATAR_NYXID_API_ADMIN_AUDIT_H_
