// Which upstream addresses the proxy refuses (SSRF), by literal and after
// the resolver; and the bootstrap file's early check with its opt-in.
#include "nyxid/proxy/upstream_address.h"

#include "gtest/gtest.h"
#include "nyxid/bootstrap/bootstrap.h"

namespace aevatar::nyxid {
namespace {

TEST(UpstreamAddress, LinkLocalMetadataAndUnspecifiedAddressesAreRefused) {
  for (const char* ip :
       {"169.254.169.254", "169.254.0.1", "0.0.0.0", "0.1.2.3", "100.100.100.200", "fe80::1",
        "febf::1", "fe80::1%eth0", "::", "::ffff:169.254.169.254", "::ffff:0.0.0.0",
        "::169.254.169.254", "64:ff9b::169.254.169.254", "fd00:ec2::254"}) {
    EXPECT_TRUE(IsForbiddenUpstreamIp(ip)) << ip;
  }
  for (const char* ip :
       {"127.0.0.1", "::1", "10.0.0.5", "192.168.1.1", "169.253.255.255", "100.100.100.201",
        "fec0::1", "2001:db8::1", "::ffff:127.0.0.1", "chrono.internal"}) {
    EXPECT_FALSE(IsForbiddenUpstreamIp(ip)) << ip;
  }
}

TEST(UpstreamAddress, TheHostIsTakenWithoutUserinfoPortOrBrackets) {
  EXPECT_EQ(UrlHost("http://169.254.169.254/latest"), "169.254.169.254");
  EXPECT_EQ(UrlHost("https://user@[fe80::1]:8443/x?y"), "fe80::1");
  EXPECT_EQ(UrlHost("http://a@b@169.254.169.254:80"), "169.254.169.254");
  EXPECT_EQ(UrlHost("http://chrono:8080"), "chrono");
}

TEST(UpstreamAddress, TheResolvedAddressIsCheckedNotOnlyTheLiteral) {
  // One-number and short IPv4 forms: not literals to inet_pton, but the
  // resolver answers with the metadata and unspecified addresses.
  for (const char* url : {"http://2852039166/", "http://0/", "http://169.254.43518/"}) {
    EXPECT_TRUE(CheckUpstreamLiteral(url, false).ok()) << url;
    absl::Status st = CheckUpstreamAddress(url, false);
    EXPECT_EQ(st.code(), absl::StatusCode::kPermissionDenied) << url << " " << st;
    EXPECT_TRUE(CheckUpstreamAddress(url, /*allow_link_local=*/true).ok()) << url;
  }
  EXPECT_TRUE(CheckUpstreamAddress("http://localhost:9/", false).ok());
  EXPECT_TRUE(CheckUpstreamAddress("http://127.0.0.1:9/", false).ok());
  EXPECT_FALSE(CheckUpstreamAddress("http://[fe80::1]:9/", false).ok());
}

TEST(UpstreamAddress, TheBootstrapFileRefusesALinkLocalUpstreamUnlessTheCatalogAllowsIt) {
  const std::string catalog = R"yaml(
catalog:
  - {id: meta, slug: meta, base_url: "http://169.254.169.254/")yaml";
  EXPECT_FALSE(ParseBootstrap(catalog + "}\n").ok());
  auto allowed = ParseBootstrap(catalog + ", allow_link_local: true}\n");
  ASSERT_TRUE(allowed.ok()) << allowed.status();
  EXPECT_TRUE(allowed->catalog[0].allow_link_local);
  EXPECT_FALSE(ParseBootstrap(R"yaml(
users: [{username: alice, password: pw}]
user_services:
  - {owner: {user: alice}, slug: meta, base_url: "http://[fe80::1]:80/"}
)yaml")
                   .ok());
}

TEST(UpstreamAddress, DelegationAudiencesAreCatalogSlugs) {
  auto parsed = ParseBootstrap(R"yaml(
catalog:
  - {id: m, slug: m, base_url: "http://127.0.0.1:9", delegation_audiences: [chrono-sandbox]}
)yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->catalog[0].delegation_audiences, std::vector<std::string>{"chrono-sandbox"});
  EXPECT_FALSE(ParseBootstrap(R"yaml(
catalog:
  - {id: m, slug: m, base_url: "http://127.0.0.1:9", delegation_audiences: ["Not A Slug"]}
)yaml")
                   .ok());
}

}  // namespace
}  // namespace aevatar::nyxid
