// Bench helper: writes a JWKS file with a fresh Ed25519 key and prints a
// delegation token signed by it (sub "bench", scope sandbox:execute, one
// hour), so the service benchmark can authenticate like the NyxID proxy.
// A stand-in for NyxID's token minting, for benchmarks only.
#include <cstdio>
#include <fstream>

#include "base/clock.h"
#include "base/crypto.h"
#include "base/jws.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: mint_delegation JWKS_OUT\n");
    return 2;
  }
  const auto keys = aevatar::base::GenerateEd25519KeyPair();
  aevatar::base::Jwks jwks;
  jwks.Add({"bench-key", keys.public_key});
  std::ofstream(argv[1]) << jwks.ToJson();
  const int64_t now = aevatar::base::NowUnixSecs();
  const nlohmann::json claims = {{"iss", "bench"},
                                 {"sub", "bench"},
                                 {"aud", "chrono-sandbox"},
                                 {"scope", "sandbox:execute"},
                                 {"iat", now},
                                 {"exp", now + 3600},
                                 {"jti", aevatar::base::RandomId("jti_")},
                                 {"token_kind", "delegation"}};
  std::printf("%s\n", aevatar::base::SignJws(claims, "bench-key", keys.secret_key).c_str());
  return 0;
}
