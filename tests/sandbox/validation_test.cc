#include "sandbox/validation.h"

#include "gtest/gtest.h"
#include "sandbox/engine.h"

namespace aevatar::sandbox {
namespace {

const Limits kMaxima = EngineOptions{}.max_limits;

TEST(ValidateLimits, DefaultsAreAccepted) { EXPECT_TRUE(ValidateLimits(Limits{}, kMaxima).ok()); }

TEST(ValidateLimits, TimeoutMustBeOneToSixHundredSeconds) {
  for (int secs : {1, 180, 600}) {
    Limits limits;
    limits.wall_timeout_secs = secs;
    EXPECT_TRUE(ValidateLimits(limits, kMaxima).ok()) << secs;
  }
  for (int secs : {0, -1, 601, 100000}) {
    Limits limits;
    limits.wall_timeout_secs = secs;
    EXPECT_TRUE(absl::IsInvalidArgument(ValidateLimits(limits, kMaxima))) << secs;
  }
}

TEST(ValidateLimits, OperatorMaximaBindCallers) {
  Limits maxima = kMaxima;
  maxima.memory_bytes = 256ull << 20;
  Limits limits;  // 512 MiB by default
  EXPECT_TRUE(absl::IsInvalidArgument(ValidateLimits(limits, maxima)));
  limits.memory_bytes = 128ull << 20;
  EXPECT_TRUE(ValidateLimits(limits, maxima).ok());
}

TEST(ValidateCallerEnv, PlainPairsPass) {
  EXPECT_TRUE(ValidateCallerEnv({{"FOO", "bar"}, {"_X1", ""}, {"PATH", "/x"}}).ok());
}

TEST(ValidateCallerEnv, ReservedAndLoaderNamesAreRejectedWithoutEchoingValues) {
  for (const char* name : {"NYXID_API_KEY", "NYXID_BASE_URL", "NYXID_LLM_TOKEN", "NYXID_ANYTHING",
                           "nyxid_api_key", "LD_PRELOAD", "LD_AUDIT"}) {
    absl::Status status = ValidateCallerEnv({{name, "secret-value-123"}});
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << name;
    EXPECT_EQ(status.message().find("secret-value-123"), absl::string_view::npos);
  }
}

TEST(ValidateCallerEnv, MalformedNamesAndValuesAreRejected) {
  EXPECT_FALSE(ValidateCallerEnv({{"", "x"}}).ok());
  EXPECT_FALSE(ValidateCallerEnv({{"1ABC", "x"}}).ok());
  EXPECT_FALSE(ValidateCallerEnv({{"A=B", "x"}}).ok());
  EXPECT_FALSE(ValidateCallerEnv({{"A", std::string("x\0y", 3)}}).ok());
  std::vector<EnvVar> many(kMaxEnvVars + 1, {"A", "b"});
  EXPECT_FALSE(ValidateCallerEnv(many).ok());
}

}  // namespace
}  // namespace aevatar::sandbox
