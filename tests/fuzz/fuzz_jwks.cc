// JWKS documents as chrono-sandbox and aevatar fetch them from NyxID.
// Properties: no crash or exception; a document that parses re-serialises
// (Jwks::ToJson) to one that parses to the same keys under the same kids.
#include "base/jws.h"
#include "fuzz_check.h"

using namespace aevatar;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto jwks = base::Jwks::Parse(fuzz::AsText(data, size));
  if (!jwks.ok()) return 0;
  const std::string written = jwks->ToJson();
  auto again = base::Jwks::Parse(written);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->ToJson() == written);
  return 0;
}
