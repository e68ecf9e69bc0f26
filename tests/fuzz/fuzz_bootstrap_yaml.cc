// NyxID's bootstrap file (nyxid serve --bootstrap), the operator's YAML.
// Properties: no crash, exception or hang; whatever parses names only valid
// slugs and 64-hex-digit client secrets, and every user has a password.
#include "fuzz_check.h"
#include "nyxid/bootstrap/bootstrap.h"

using namespace aevatar;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto spec = nyxid::ParseBootstrap(std::string(fuzz::AsText(data, size)));
  if (!spec.ok()) return 0;
  for (const nyxid::BootstrapUser& user : spec->users) {
    FUZZ_CHECK(!user.username.empty());
    FUZZ_CHECK(!user.password_hash.empty() || user.password.has_value());
  }
  for (const nyxid::BootstrapOrg& org : spec->orgs) FUZZ_CHECK(nyxid::IsValidSlug(org.slug));
  for (const nyxid::CatalogService& service : spec->catalog) {
    FUZZ_CHECK(!service.id.empty());
    FUZZ_CHECK(nyxid::IsValidSlug(service.slug));
  }
  for (const nyxid::RegisteredClient& client : spec->clients) {
    FUZZ_CHECK(client.secret_sha256_hex.size() == 64);
  }
  return 0;
}
