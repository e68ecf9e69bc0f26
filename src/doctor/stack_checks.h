#ifndef AEVATAR_DOCTOR_STACK_CHECKS_H_
#define AEVATAR_DOCTOR_STACK_CHECKS_H_

#include <string>
#include <vector>

#include "doctor/check.h"

namespace aevatar::doctor {

// The checks `aevatar doctor` adds to the host checks for `aevatar up`'s
// state directory (up embeds the executor, so the host checks apply too):
//   state_dir  exists as a directory this process can write, private to its
//              owner (or can be made: its nearest existing parent is writable);
//   vault_key  aevatar's vault key loads as the service would load it
//              ($AEVATAR_VAULT_KEY, else <state_dir>/aevatar/vault.key);
//              an absent key is fine: the first start makes one.
// Neither check creates or changes anything.
std::vector<Check> StackChecks(const std::string& state_dir);

}  // namespace aevatar::doctor

#endif  // AEVATAR_DOCTOR_STACK_CHECKS_H_
