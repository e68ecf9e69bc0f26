#include "base/json_read.h"

#include <string>

#include "gtest/gtest.h"

namespace aevatar::base {
namespace {

using nlohmann::json;

TEST(JsonRead, ParseRefusesNonJsonWithoutThrowing) {
  EXPECT_FALSE(ParseJson("{\"a\":").ok());
  EXPECT_FALSE(ParseJson("").ok());
  EXPECT_FALSE(ParseJson("\xff\xfe").ok());
  EXPECT_TRUE(ParseJson("[1, \"x\", null]").ok());
}

TEST(JsonRead, ParseRefusesDeepNestingBeforeBuilding) {
  std::string deep(100000, '[');
  deep += std::string(100000, ']');
  auto parsed = ParseJson(deep);
  EXPECT_TRUE(absl::IsInvalidArgument(parsed.status()));
  EXPECT_TRUE(ParseJson(std::string(10, '[') + std::string(10, ']')).ok());
  // Brackets inside strings do not count.
  EXPECT_TRUE(ParseJson("{\"a\":\"" + std::string(1000, '[') + "\\\"\"}").ok());
}

TEST(JsonRead, ParseJsonObjectRequiresAnObject) {
  EXPECT_TRUE(ParseJsonObject("{}").ok());
  EXPECT_FALSE(ParseJsonObject("[]").ok());
  EXPECT_FALSE(ParseJsonObject("\"status\"").ok());
}

TEST(JsonRead, RequiredFieldsRefuseAbsentNullAndWrongTypes) {
  json doc = json::parse(R"({"s": "x", "i": 7, "b": true, "n": null, "f": 1.5, "o": {}, "a": []})");
  EXPECT_EQ(*RequiredString(doc, "s"), "x");
  EXPECT_EQ(*RequiredInt(doc, "i"), 7);
  EXPECT_TRUE(*RequiredBool(doc, "b"));
  EXPECT_TRUE(RequiredObject(doc, "o").ok());
  EXPECT_TRUE(RequiredArray(doc, "a").ok());
  EXPECT_FALSE(RequiredString(doc, "i").ok());
  EXPECT_FALSE(RequiredString(doc, "n").ok());
  EXPECT_FALSE(RequiredString(doc, "absent").ok());
  EXPECT_FALSE(RequiredInt(doc, "f").ok());
  EXPECT_FALSE(RequiredInt(doc, "s").ok());
  EXPECT_FALSE(RequiredBool(doc, "i").ok());
  EXPECT_FALSE(RequiredObject(doc, "a").ok());
  EXPECT_FALSE(RequiredArray(doc, "o").ok());
  EXPECT_FALSE(RequiredString(json::array({1}), "s").ok());
  EXPECT_FALSE(RequiredString(json("text"), "s").ok());
}

TEST(JsonRead, IntegersBeyondInt64AreTheWrongType) {
  json doc = json::parse(R"({"big": 18446744073709551615, "max": 9223372036854775807})");
  EXPECT_FALSE(RequiredInt(doc, "big").ok());
  EXPECT_EQ(*RequiredInt(doc, "max"), INT64_MAX);
}

TEST(JsonRead, OptionalFieldsAreAbsentOnlyWhenAbsentOrNull) {
  json doc = json::parse(R"({"s": "x", "n": null, "i": 3})");
  EXPECT_EQ(**OptionalString(doc, "s"), "x");
  EXPECT_FALSE(OptionalString(doc, "n")->has_value());
  EXPECT_FALSE(OptionalString(doc, "absent")->has_value());
  EXPECT_FALSE(OptionalString(doc, "i").ok()) << "a wrong type is not 'absent'";
  EXPECT_EQ(**OptionalInt(doc, "i"), 3);
  EXPECT_FALSE(OptionalBool(doc, "s").ok());
  EXPECT_FALSE(OptionalString(json::array(), "s").ok());
}

TEST(JsonRead, ErrorsNameTheFieldNotTheValue) {
  json doc = {{"token", 12345}};
  auto read = RequiredString(doc, "token");
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("token"), std::string::npos);
  EXPECT_EQ(read.status().message().find("12345"), std::string::npos);
}

TEST(JsonRead, LenientReadsFallBackOnAnyMismatch) {
  json doc = json::parse(R"({"s": 1, "i": "2", "b": "yes"})");
  EXPECT_EQ(StringOr(doc, "s", "d"), "d");
  EXPECT_EQ(IntOr(doc, "i", -1), -1);
  EXPECT_TRUE(BoolOr(doc, "b", true));
  EXPECT_EQ(StringOr(json(nullptr), "s", "d"), "d");
}

TEST(JsonRead, StrictParseRefusesRepeatedKeysAtAnyDepth) {
  EXPECT_TRUE(ParseStrictJsonObject(R"({"a":1,"b":{"a":2}})").ok()) << "same key, other object";
  EXPECT_FALSE(ParseStrictJsonObject(R"({"alg":"none","alg":"EdDSA"})").ok());
  EXPECT_FALSE(ParseStrictJsonObject(R"({"x":[{"k":1,"k":2}]})").ok());
  EXPECT_FALSE(ParseStrictJsonObject("[]").ok());
  EXPECT_FALSE(ParseStrictJsonObject("{").ok());
  // The depth bound holds here too.
  EXPECT_FALSE(
      ParseStrictJsonObject("{\"a\":" + std::string(100, '[') + std::string(100, ']') + "}").ok());
}

TEST(JsonRead, ArrayAndObjectOrEmptyNeverYieldAnotherType) {
  json doc = json::parse(R"({"a": [1, 2], "o": {"k": 1}, "s": "x", "n": null})");
  EXPECT_EQ(ArrayOrEmpty(doc, "a").size(), 2u);
  EXPECT_TRUE(ArrayOrEmpty(doc, "s").is_array());
  EXPECT_TRUE(ArrayOrEmpty(doc, "s").empty());
  EXPECT_TRUE(ArrayOrEmpty(doc, "o").empty());
  EXPECT_TRUE(ArrayOrEmpty(json("text"), "a").empty());
  EXPECT_EQ(ObjectOrEmpty(doc, "o").size(), 1u);
  EXPECT_TRUE(ObjectOrEmpty(doc, "a").is_object());
  EXPECT_TRUE(ObjectOrEmpty(doc, "n").empty());
}

}  // namespace
}  // namespace aevatar::base
