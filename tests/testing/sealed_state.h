#ifndef AEVATAR_TESTS_TESTING_SEALED_STATE_H_
#define AEVATAR_TESTS_TESTING_SEALED_STATE_H_

#include <string>
#include <vector>

// Reading an aevatar state directory as an attacker with a copy of it would.
namespace aevatar::testing {

// The bytes of the file at `path` ("" when unreadable).
std::string FileBytes(const std::string& path);

// Every sealed value in the state directory `state` (each column of
// orchestrator::kSealedColumns whose file exists), straight from the files.
std::vector<std::string> SealedValues(const std::string& state);

}  // namespace aevatar::testing

#endif  // AEVATAR_TESTS_TESTING_SEALED_STATE_H_
