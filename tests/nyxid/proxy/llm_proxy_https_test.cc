// The chrono-llm-public model route to an https provider: a real `nyxid
// serve` whose catalog names an https base_url, in front of the recording
// upstream behind a TLS front with the test PKI (tests/http/testdata). Proves
// that the bootstrap takes the https URL, that --upstream-ca-file is what
// makes a private CA trusted, and that an unverified provider gets nothing.
#include <fstream>
#include <string>

#include "base/crypto.h"
#include "gtest/gtest.h"
#include "nyxid/proxy/recording_upstream.h"
#include "nyxid_fixture.h"
#include "testing/tls_front.h"

namespace aevatar::testing {
namespace {

constexpr char kStreamingRequest[] = R"({"model":"gpt-double-1","input":"hello","stream":true})";

class LlmProxyHttps : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(front_.ok());
    provider_key_ = "sk-PLANTED-provider-" + base::RandomId("");
    std::ofstream(key_dir_.path() + "/provider.key") << provider_key_ << "\n";
  }

  // The llm catalog entry points at the TLS front by name, as an operator's
  // `--llm-upstream https://provider.example/v1` would.
  std::string Bootstrap() const {
    return "users:\n  - {username: alice, password: alice-password-1}\n"
           "catalog:\n"
           "  - id: cat_chrono_llm_public\n"
           "    slug: chrono-llm-public\n"
           "    kind: llm\n"
           "    base_url: https://localhost:" +
           std::to_string(front_.port()) +
           "/v1\n"
           "    provider_api_key_file: " +
           key_dir_.path() +
           "/provider.key\n"
           "    model_allowlist: [gpt-double-1]\n"
           "    delegation_audiences: [chrono-sandbox]\n"
           "    auto_connect: true\n";
  }

  // POST /responses through `nyxid` as alice.
  static http::ClientResponse CallModel(NyxidFixture& nyxid) {
    const std::string token = nyxid.Login("alice", "alice-password-1");
    const std::string route = nyxid.KeyBySlug(token, "chrono-llm-public").value("id", "");
    EXPECT_FALSE(route.empty());
    return nyxid.Call("POST", "/api/v1/proxy/chrono-llm-public/responses?_nyxid_via=" + route,
                      token, kStreamingRequest, {{"Accept", "text/event-stream"}});
  }

  RecordingUpstream upstream_;
  TlsFront front_{upstream_.port(), TlsFront::Fixture("server.pem"),
                  TlsFront::Fixture("server.key")};
  TempDir key_dir_;
  std::string provider_key_;
};

TEST_F(LlmProxyHttps, AModelCallReachesAnHttpsProviderTrustedThroughTheUpstreamCaFile) {
  NyxidFixture nyxid(Bootstrap(), {"--upstream-ca-file", TlsFront::Fixture("ca.pem")});
  ASSERT_TRUE(nyxid.ok()) << nyxid.service().ReadLog();
  auto response = CallModel(nyxid);
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(response.headers.Get("Content-Type").value_or(""), "text/event-stream");
  EXPECT_EQ(response.body,
            std::string(RecordingUpstream::kFirstEvent) + RecordingUpstream::kSecondEvent);
  const std::vector<RecordedRequest> requests = upstream_.Requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].target, "/v1/responses");
  EXPECT_EQ(requests[0].Header("Authorization"), "Bearer " + provider_key_);
  EXPECT_EQ(front_.handshakes(), 1);  // it went through TLS, not around it
}

TEST_F(LlmProxyHttps, WithoutTheCaFileTheProviderIsUnverifiedAndGetsNothing) {
  NyxidFixture nyxid(Bootstrap());  // the https URL is accepted; the test CA is not trusted
  ASSERT_TRUE(nyxid.ok()) << nyxid.service().ReadLog();
  auto response = CallModel(nyxid);
  ExpectProblem(response, 502, "UPSTREAM_UNREACHABLE");
  EXPECT_TRUE(upstream_.Requests().empty());  // neither the key nor the body left nyxid
  EXPECT_EQ(response.body.find("localhost"), std::string::npos);  // topology stays private
  EXPECT_NE(nyxid.service().ReadLog().find("TLS verification"), std::string::npos);
}

TEST_F(LlmProxyHttps, AnUnusableUpstreamCaFileIsRefusedAtStart) {
  for (const std::string& file :
       {TlsFront::Fixture("missing.pem"), TlsFront::Fixture("generate.sh")}) {
    NyxidFixture refused(Bootstrap(), {"--upstream-ca-file", file});
    EXPECT_FALSE(refused.ok()) << file;
    // Refused by the check, not by an unknown flag.
    EXPECT_NE(refused.service().ReadLog().find("--ca-file"), std::string::npos)
        << refused.service().ReadLog();
  }
}

}  // namespace
}  // namespace aevatar::testing
