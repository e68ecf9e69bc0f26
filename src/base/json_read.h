#ifndef AEVATAR_BASE_JSON_READ_H_
#define AEVATAR_BASE_JSON_READ_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

// Typed, non-throwing reads of JSON that came from outside the process: a
// reply of another service, a request body, a file an operator wrote. Every
// such read goes through these functions, never through nlohmann's value(),
// get<>() or operator[] (which throw or insert on the wrong type), so a
// malformed document becomes an InvalidArgument status the caller maps to its
// typed error, never an exception.
//
// Error messages name the field and the expected type, never the value: the
// value may be a secret.
namespace aevatar::base {

// Parses `bytes` as one JSON document. InvalidArgument when it is not JSON or
// nests deeper than `max_depth` (deep nesting is how a hostile peer exhausts
// the stack of a recursive parser).
absl::StatusOr<nlohmann::json> ParseJson(std::string_view bytes, size_t max_depth = 64);

// Like ParseJson, and the document must be an object.
absl::StatusOr<nlohmann::json> ParseJsonObject(std::string_view bytes, size_t max_depth = 64);

// Like ParseJsonObject, and no object anywhere in the document may repeat a
// key: parsers disagree on which duplicate wins, so a signed header such as
// {"alg":"none","alg":"EdDSA"} must not mean different things to different
// readers.
absl::StatusOr<nlohmann::json> ParseStrictJsonObject(std::string_view bytes, size_t max_depth = 64);

// Required members: InvalidArgument when `object` is not an object, the member
// is absent or null, or has another type.
absl::StatusOr<std::string> RequiredString(const nlohmann::json& object, std::string_view key);
absl::StatusOr<int64_t> RequiredInt(const nlohmann::json& object, std::string_view key);
absl::StatusOr<bool> RequiredBool(const nlohmann::json& object, std::string_view key);
// The member itself, when it is an object / an array (valid while `object` lives).
absl::StatusOr<const nlohmann::json*> RequiredObject(const nlohmann::json& object,
                                                     std::string_view key);
absl::StatusOr<const nlohmann::json*> RequiredArray(const nlohmann::json& object,
                                                    std::string_view key);

// Optional members: nullopt when absent or null; InvalidArgument when present
// with another type (a wrong type is never silently read as "absent").
// `object` itself must be an object.
absl::StatusOr<std::optional<std::string>> OptionalString(const nlohmann::json& object,
                                                          std::string_view key);
absl::StatusOr<std::optional<int64_t>> OptionalInt(const nlohmann::json& object,
                                                   std::string_view key);
absl::StatusOr<std::optional<bool>> OptionalBool(const nlohmann::json& object,
                                                 std::string_view key);

// Lenient reads for display-only fields: the member when it has the type,
// else `fallback`. Never for a field that decides anything.
std::string StringOr(const nlohmann::json& object, std::string_view key, std::string fallback);
int64_t IntOr(const nlohmann::json& object, std::string_view key, int64_t fallback);
bool BoolOr(const nlohmann::json& object, std::string_view key, bool fallback);
// The member when it is an array / an object, else an empty one (valid while
// `object` lives), so a display loop never meets another type.
const nlohmann::json& ArrayOrEmpty(const nlohmann::json& object, std::string_view key);
const nlohmann::json& ObjectOrEmpty(const nlohmann::json& object, std::string_view key);

}  // namespace aevatar::base

#endif  // AEVATAR_BASE_JSON_READ_H_
