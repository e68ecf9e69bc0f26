// token_check_bench: what checking a compact JWS costs when the token was seen
// before (the bearer and delegation tokens of every stack call) against a
// token seen for the first time, in the same process (STYLE §12: a ratio
// against a baseline in the same run; never a test).
//
//   BM_VerifyJws/first_sight  each check a token this process never saw: the
//                             full check (base64, strict JSON parses, Ed25519)
//   BM_VerifyJws/remembered   the same token every time: one BLAKE2b hash, the
//                             kid's lookup and the copies of header and claims
//                             (src/base/verified_tokens.h)
//
// The claims are shaped like a delegation token NyxID signs for chrono-sandbox.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "base/crypto.h"
#include "base/jws.h"
#include "base/verified_tokens.h"

namespace {

using aevatar::base::Ed25519KeyPair;
using aevatar::base::Jwk;
using aevatar::base::KeyLookup;

const Ed25519KeyPair& SigningKey() {
  static const Ed25519KeyPair pair = aevatar::base::GenerateEd25519KeyPair();
  return pair;
}

KeyLookup Lookup() {
  return [](std::string_view kid) -> absl::StatusOr<Jwk> {
    if (kid != "bench-key") return absl::NotFoundError("unknown kid");
    return Jwk{"bench-key", SigningKey().public_key};
  };
}

std::string DelegationToken(int serial) {
  const nlohmann::json claims = {{"iss", "http://127.0.0.1:18080"},
                                 {"sub", "usr_5d2kq7m3v9x1c8b4n6h0j2f7a"},
                                 {"aud", "chrono-sandbox"},
                                 {"token_kind", "delegation"},
                                 {"scope", "execute read"},
                                 {"iat", 1'800'000'000},
                                 {"nbf", 1'800'000'000},
                                 {"exp", 1'800'000'030},
                                 {"jti", "dlg_" + std::to_string(serial)},
                                 {"act", {{"sub", "aevatar"}}}};
  return aevatar::base::SignJws(claims, "bench-key", SigningKey().secret_key);
}

void Check(benchmark::State& state, const std::string& token, const KeyLookup& lookup) {
  auto verified = aevatar::base::VerifyJws(token, lookup);
  if (!verified.ok()) state.SkipWithError("a token the benchmark signed did not verify");
  benchmark::DoNotOptimize(verified);
}

void BM_VerifyJws(benchmark::State& state, bool remembered) {
  // Four times as many distinct tokens as the table holds, taken in turn, so
  // a first-sight check nearly always finds its token replaced since it was
  // last seen (a token alone in its slot, about 2 % of them, still hits).
  constexpr size_t kFresh = 4 * aevatar::base::VerifiedTokens::kSlots;
  static const std::vector<std::string> tokens = [] {
    std::vector<std::string> out;
    for (size_t i = 0; i < kFresh; ++i) out.push_back(DelegationToken(static_cast<int>(i)));
    return out;
  }();
  const KeyLookup lookup = Lookup();
  // Across the framework's sizing runs too: a restart at 0 would meet the
  // tokens the previous run just remembered.
  static size_t next = 0;
  for (auto _ : state) {
    Check(state, remembered ? tokens[0] : tokens[next], lookup);
    next = (next + 1) % tokens.size();
  }
}
BENCHMARK_CAPTURE(BM_VerifyJws, first_sight, false);
BENCHMARK_CAPTURE(BM_VerifyJws, remembered, true);

}  // namespace

BENCHMARK_MAIN();
