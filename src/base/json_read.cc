#include "base/json_read.h"

#include <set>
#include <vector>

#include "absl/status/status.h"

namespace aevatar::base {
namespace {

using nlohmann::json;

// The member or nullptr; nullptr also when `object` is not an object.
const json* Member(const json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

absl::Status Missing(std::string_view key, std::string_view type) {
  return absl::InvalidArgumentError("field '" + std::string(key) + "' (" + std::string(type) +
                                    ") is missing");
}
absl::Status WrongType(std::string_view key, std::string_view type) {
  return absl::InvalidArgumentError("field '" + std::string(key) + "' is not " + std::string(type));
}
absl::Status NotAnObject() { return absl::InvalidArgumentError("the document is not an object"); }

// Integers only: a float (1.5) or an unsigned beyond int64 is the wrong type.
bool IsInt64(const json& value) {
  if (value.is_number_integer() && !value.is_number_unsigned()) return true;
  return value.is_number_unsigned() && value.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX);
}

template <typename T>
absl::StatusOr<T> Required(const json& object, std::string_view key, std::string_view type,
                           bool (*has_type)(const json&)) {
  if (!object.is_object()) return NotAnObject();
  const json* member = Member(object, key);
  if (member == nullptr) return Missing(key, type);
  if (!has_type(*member)) return WrongType(key, type);
  return member->get<T>();
}

template <typename T>
absl::StatusOr<std::optional<T>> Optional(const json& object, std::string_view key,
                                          std::string_view type, bool (*has_type)(const json&)) {
  if (!object.is_object()) return NotAnObject();
  const json* member = Member(object, key);
  if (member == nullptr) return std::optional<T>();
  if (!has_type(*member)) return WrongType(key, type);
  return std::optional<T>(member->get<T>());
}

bool IsString(const json& v) { return v.is_string(); }
bool IsBool(const json& v) { return v.is_boolean(); }

// Whether the brackets of `bytes` nest deeper than `limit`, outside strings.
// Checked before parsing, so a hostile document is refused before it is
// built (a deep tree costs recursion when it is copied or destroyed).
bool NestsDeeperThan(std::string_view bytes, size_t limit) {
  size_t depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : bytes) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<json> ParseJson(std::string_view bytes, size_t max_depth) {
  if (NestsDeeperThan(bytes, max_depth)) {
    return absl::InvalidArgumentError("the document nests too deeply");
  }
  json doc = json::parse(bytes.begin(), bytes.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return absl::InvalidArgumentError("the document is not valid JSON");
  return doc;
}

absl::StatusOr<json> ParseJsonObject(std::string_view bytes, size_t max_depth) {
  auto doc = ParseJson(bytes, max_depth);
  if (!doc.ok()) return doc.status();
  if (!doc->is_object()) return NotAnObject();
  return doc;
}

absl::StatusOr<json> ParseStrictJsonObject(std::string_view bytes, size_t max_depth) {
  if (NestsDeeperThan(bytes, max_depth)) {
    return absl::InvalidArgumentError("the document nests too deeply");
  }
  // One set of seen keys per open object; nlohmann reports each key through
  // the callback before it stores it, which is where a duplicate shows.
  std::vector<std::set<std::string>> open_objects;
  bool duplicate = false;
  auto callback = [&](int /*depth*/, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      open_objects.emplace_back();
    } else if (event == json::parse_event_t::key && !open_objects.empty() && parsed.is_string()) {
      if (!open_objects.back().insert(parsed.get<std::string>()).second) duplicate = true;
    } else if (event == json::parse_event_t::object_end && !open_objects.empty()) {
      open_objects.pop_back();
    }
    return true;
  };
  json doc = json::parse(bytes.begin(), bytes.end(), callback, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return absl::InvalidArgumentError("the document is not valid JSON");
  if (duplicate) return absl::InvalidArgumentError("an object in the document repeats a key");
  if (!doc.is_object()) return NotAnObject();
  return doc;
}

absl::StatusOr<std::string> RequiredString(const json& object, std::string_view key) {
  return Required<std::string>(object, key, "a string", IsString);
}
absl::StatusOr<int64_t> RequiredInt(const json& object, std::string_view key) {
  return Required<int64_t>(object, key, "an integer", IsInt64);
}
absl::StatusOr<bool> RequiredBool(const json& object, std::string_view key) {
  return Required<bool>(object, key, "a boolean", IsBool);
}

absl::StatusOr<const json*> RequiredObject(const json& object, std::string_view key) {
  if (!object.is_object()) return NotAnObject();
  const json* member = Member(object, key);
  if (member == nullptr) return Missing(key, "an object");
  if (!member->is_object()) return WrongType(key, "an object");
  return member;
}
absl::StatusOr<const json*> RequiredArray(const json& object, std::string_view key) {
  if (!object.is_object()) return NotAnObject();
  const json* member = Member(object, key);
  if (member == nullptr) return Missing(key, "an array");
  if (!member->is_array()) return WrongType(key, "an array");
  return member;
}

absl::StatusOr<std::optional<std::string>> OptionalString(const json& object,
                                                          std::string_view key) {
  return Optional<std::string>(object, key, "a string", IsString);
}
absl::StatusOr<std::optional<int64_t>> OptionalInt(const json& object, std::string_view key) {
  return Optional<int64_t>(object, key, "an integer", IsInt64);
}
absl::StatusOr<std::optional<bool>> OptionalBool(const json& object, std::string_view key) {
  return Optional<bool>(object, key, "a boolean", IsBool);
}

std::string StringOr(const json& object, std::string_view key, std::string fallback) {
  const json* member = Member(object, key);
  return member != nullptr && member->is_string() ? member->get<std::string>()
                                                  : std::move(fallback);
}
int64_t IntOr(const json& object, std::string_view key, int64_t fallback) {
  const json* member = Member(object, key);
  return member != nullptr && IsInt64(*member) ? member->get<int64_t>() : fallback;
}
bool BoolOr(const json& object, std::string_view key, bool fallback) {
  const json* member = Member(object, key);
  return member != nullptr && member->is_boolean() ? member->get<bool>() : fallback;
}

const json& ArrayOrEmpty(const json& object, std::string_view key) {
  static const json* const kEmpty = new json(json::array());
  const json* member = Member(object, key);
  return member != nullptr && member->is_array() ? *member : *kEmpty;
}
const json& ObjectOrEmpty(const json& object, std::string_view key) {
  static const json* const kEmpty = new json(json::object());
  const json* member = Member(object, key);
  return member != nullptr && member->is_object() ? *member : *kEmpty;
}

}  // namespace aevatar::base
