// The proxy's header and URL policy.
#include "nyxid/proxy/proxy_headers.h"

#include "base/api_error.h"
#include "gtest/gtest.h"

namespace aevatar::nyxid {
namespace {

TEST(ProxyHeaders, CallerHopByHopAndNyxidHeadersAreDropped) {
  http::Headers caller;
  caller.Add("Content-Type", "application/json");
  caller.Add("Idempotency-Key", "k1");
  caller.Add("If-None-Match", "\"abc\"");
  caller.Add("Connection", "keep-alive, X-Secret-Hop");
  caller.Add("X-Secret-Hop", "1");
  caller.Add("Keep-Alive", "timeout=5");
  caller.Add("Transfer-Encoding", "chunked");
  caller.Add("Upgrade", "websocket");
  caller.Add("Proxy-Authorization", "Basic eA==");
  caller.Add("TE", "trailers");
  caller.Add("Host", "nyxid.example");
  caller.Add("Content-Length", "12");
  caller.Add("Cookie", "session=1");
  caller.Add("Authorization", "Bearer caller-token");
  caller.Add("X-NyxID-Delegation-Token", "forged");
  caller.Add("x-nyxid-anything", "forged");
  caller.Add("Expect", "100-continue");  // NyxID has the body already

  http::Headers out = UpstreamRequestHeaders(caller, {});
  EXPECT_EQ(out.Get("Content-Type"), "application/json");
  EXPECT_EQ(out.Get("Idempotency-Key"), "k1");
  EXPECT_EQ(out.Get("If-None-Match"), "\"abc\"");
  for (const char* dropped :
       {"Connection", "X-Secret-Hop", "Keep-Alive", "Transfer-Encoding", "Upgrade",
        "Proxy-Authorization", "TE", "Host", "Content-Length", "Cookie", "Authorization",
        "X-NyxID-Delegation-Token", "X-NyxID-Anything", "Expect"}) {
    EXPECT_FALSE(out.Get(dropped).has_value()) << dropped;
  }
  // The proxy names itself to the upstream.
  EXPECT_EQ(out.Get("Via"), "1.1 nyxid");
}

TEST(ProxyHeaders, PolicyAddsTheCallersCredentialAndAFreshDelegationToken) {
  http::Headers caller;
  caller.Add("Authorization", "Bearer nyxid_ag_caller");
  caller.Add("X-NyxID-Delegation-Token", "forged");
  UpstreamCredentials credentials;
  credentials.authorization = "nyxid_ag_caller";
  credentials.delegation_token = "minted";
  http::Headers out = UpstreamRequestHeaders(caller, credentials);
  EXPECT_EQ(out.Get("Authorization"), "Bearer nyxid_ag_caller");
  EXPECT_EQ(out.Get("X-NyxID-Delegation-Token"), "minted");
  int delegation_fields = 0;
  for (const auto& [name, value] : out.fields()) {
    if (name == "X-NyxID-Delegation-Token") ++delegation_fields;
  }
  EXPECT_EQ(delegation_fields, 1);
}

TEST(ProxyHeaders, ResponseKeepsEndToEndFieldsAndDropsFraming) {
  http::Headers upstream;
  upstream.Add("Content-Type", "application/json");
  upstream.Add("Location", "/executions/op_1");
  upstream.Add("ETag", "\"v1\"");
  upstream.Add("Retry-After", "1");
  upstream.Add("Content-Length", "10");
  upstream.Add("Transfer-Encoding", "chunked");
  upstream.Add("Connection", "close");
  http::Headers out = DownstreamResponseHeaders(upstream);
  EXPECT_EQ(out.Get("Content-Type"), "application/json");
  EXPECT_EQ(out.Get("Location"), "/executions/op_1");
  EXPECT_EQ(out.Get("ETag"), "\"v1\"");
  EXPECT_EQ(out.Get("Retry-After"), "1");
  EXPECT_FALSE(out.Get("Content-Length"));
  EXPECT_FALSE(out.Get("Transfer-Encoding"));
  EXPECT_FALSE(out.Get("Connection"));
}

// X-NyxID-* answers speak for NyxID: an upstream that sends one (say, the
// mark of NyxID's own 412 refusal, on which a client re-sends its request)
// never gets it to the caller.
TEST(ProxyHeaders, ResponseDropsEveryNyxidField) {
  http::Headers upstream;
  upstream.Add("Content-Type", "application/problem+json");
  upstream.Add("X-NyxID-Facts-Changed", "1");
  upstream.Add("x-nyxid-anything", "forged");
  http::Headers out = DownstreamResponseHeaders(upstream);
  EXPECT_EQ(out.Get("Content-Type"), "application/problem+json");
  EXPECT_FALSE(out.Get("X-NyxID-Facts-Changed"));
  EXPECT_FALSE(out.Get("X-NyxID-Anything"));
}

TEST(ProxyHeaders, ViaParameterIsRemovedAndTheRestOfTheQueryKeptRaw) {
  EXPECT_EQ(QueryWithoutVia("_nyxid_via=us_1"), "");
  EXPECT_EQ(QueryWithoutVia("a=1&_nyxid_via=us_1&b=x%20y"), "a=1&b=x%20y");
  EXPECT_EQ(QueryWithoutVia("%5Fnyxid_via=us_1&c"), "c");
}

TEST(ProxyHeaders, UpstreamUrlJoinsAndRefusesTraversal) {
  EXPECT_EQ(*UpstreamUrl("http://127.0.0.1:81/", "executions/op_1", "a=1"),
            "http://127.0.0.1:81/executions/op_1?a=1");
  EXPECT_EQ(*UpstreamUrl("http://h:1/base", "x%20y", ""), "http://h:1/base/x%20y");
  EXPECT_EQ(*UpstreamUrl("http://h:1", "", ""), "http://h:1/");
  for (const char* bad : {"../admin", "a/%2e%2e/b", "a/./b", "a%2Fb", "a\\b"}) {
    auto url = UpstreamUrl("http://h:1/base", bad, "");
    EXPECT_EQ(base::ApiCode(url.status()), "PROXY_PATH_INVALID") << bad;
  }
}

}  // namespace
}  // namespace aevatar::nyxid
