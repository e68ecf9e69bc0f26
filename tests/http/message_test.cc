#include "http/message.h"

#include <set>

#include "absl/status/status.h"
#include "base/api_error.h"
#include "gtest/gtest.h"
#include "http/problem.h"
#include "http/url.h"
#include "nlohmann/json.hpp"

namespace aevatar::http {
namespace {

TEST(Headers, LookupIsCaseInsensitiveAndKeepsArrivalOrder) {
  Headers headers;
  headers.Add("ETag", "\"v1\"");
  headers.Add("Set-Cookie", "a=1");
  headers.Add("set-cookie", "b=2");
  EXPECT_EQ(headers.Get("etag"), "\"v1\"");
  EXPECT_EQ(headers.Get("SET-COOKIE"), "a=1");
  EXPECT_EQ(headers.Get("Location"), std::nullopt);
  ASSERT_EQ(headers.fields().size(), 3u);
  EXPECT_EQ(headers.fields()[2].second, "b=2");
}

TEST(Headers, SetReplacesEveryFieldOfThatName) {
  Headers headers;
  headers.Add("X-A", "1");
  headers.Add("x-a", "2");
  headers.Set("X-a", "3");
  ASSERT_EQ(headers.fields().size(), 1u);
  EXPECT_EQ(headers.Get("x-A"), "3");
  headers.Remove("X-A");
  EXPECT_TRUE(headers.fields().empty());
}

TEST(Query, ParsesDecodesAndKeepsTheFirstDuplicate) {
  auto params = ParseQuery("a=1&b=x%20y&c=p+q&a=2&flag&&d=");
  EXPECT_EQ(params["a"], "1");
  EXPECT_EQ(params["b"], "x y");
  EXPECT_EQ(params["c"], "p q");
  EXPECT_EQ(params["flag"], "");
  EXPECT_EQ(params["d"], "");
  EXPECT_EQ(params.size(), 5u);
}

TEST(Query, RequestQueryParamReadsItsOwnQuery) {
  Request request;
  request.query = "wait=30&name=%E2%9C%93";
  EXPECT_EQ(request.QueryParam("wait"), "30");
  EXPECT_EQ(request.QueryParam("name"), "\xE2\x9C\x93");
  EXPECT_EQ(request.QueryParam("missing"), std::nullopt);
}

TEST(PercentCodec, RoundTripsArbitraryBytes) {
  std::string bytes = "a b/c?d=e&f%g\xff\x01~-._";
  std::string encoded = PercentEncode(bytes);
  EXPECT_EQ(encoded.find_first_of(" /?=&"), std::string::npos);
  EXPECT_EQ(PercentDecode(encoded), bytes);
  EXPECT_EQ(PercentEncode("AZaz09-._~"), "AZaz09-._~");
}

TEST(PercentCodec, KeepsMalformedEscapesAndPlusLiterally) {
  EXPECT_EQ(PercentDecode("100%"), "100%");
  EXPECT_EQ(PercentDecode("%zz%4"), "%zz%4");
  EXPECT_EQ(PercentDecode("a+b%2Fc"), "a+b/c");
}

TEST(JsonResponse, SetsStatusBodyAndContentType) {
  Response response = JsonResponse(201, R"({"ok":true})");
  EXPECT_EQ(response.status, 201);
  EXPECT_EQ(response.headers.Get("content-type"), "application/json");
  EXPECT_EQ(response.body, R"({"ok":true})");
}

TEST(Problem, RendersCodeStatusAndDiagnosticId) {
  absl::Status status = base::ApiError(absl::StatusCode::kFailedPrecondition,
                                       "OPERATION_NOT_TERMINAL", "still running");
  Response response = ProblemResponse(status, "diag_0123456789abcdef");
  EXPECT_EQ(response.status, 409);
  EXPECT_EQ(response.headers.Get("Content-Type"), "application/problem+json");
  auto body = nlohmann::json::parse(response.body);
  EXPECT_EQ(body["type"], "https://aevatar.dev/problems/operation_not_terminal");
  EXPECT_EQ(body["title"], "Conflict");
  EXPECT_EQ(body["status"], 409);
  EXPECT_EQ(body["detail"], "still running");
  EXPECT_EQ(body["code"], "OPERATION_NOT_TERMINAL");
  EXPECT_EQ(body["diagnostic_id"], "diag_0123456789abcdef");
}

TEST(Problem, HonoursExplicitHttpStatusAndSurvivesInvalidUtf8) {
  absl::Status status = base::ApiError(absl::StatusCode::kNotFound, "GONE", "bad \xff byte", 410);
  Response response = ProblemResponse(status, "diag_x");
  EXPECT_EQ(response.status, 410);
  EXPECT_EQ(nlohmann::json::parse(response.body)["status"], 410);
}

TEST(Problem, DiagnosticIdsAreFreshHex) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    std::string id = NewDiagnosticId();
    ASSERT_EQ(id.size(), 5u + 16u);
    EXPECT_EQ(id.rfind("diag_", 0), 0u);
    EXPECT_EQ(id.find_first_not_of("0123456789abcdef", 5), std::string::npos);
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 100u);
}

TEST(HttpUrl, SplitsHostPortAndTarget) {
  auto url = ParseHttpUrl("http://localhost:8080/executions/op_1?x=1#frag");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->host, "localhost");
  EXPECT_EQ(url->port, 8080);
  EXPECT_EQ(url->target, "/executions/op_1?x=1");
  EXPECT_EQ(url->HostHeader(), "localhost:8080");

  auto bare = ParseHttpUrl("HTTP://10.0.0.2?q=1");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->port, 80);
  EXPECT_EQ(bare->target, "/?q=1");
  EXPECT_EQ(bare->HostHeader(), "10.0.0.2");

  auto v6 = ParseHttpUrl("http://[::1]:9/");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->HostHeader(), "[::1]:9");
  EXPECT_FALSE(v6->tls);
}

TEST(HttpUrl, HttpsDefaultsToPort443) {
  auto url = ParseHttpUrl("HTTPS://provider.example/v1/responses");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_TRUE(url->tls);
  EXPECT_EQ(url->port, 443);
  EXPECT_EQ(url->target, "/v1/responses");
  EXPECT_EQ(url->HostHeader(), "provider.example");
  auto other_port = ParseHttpUrl("https://provider.example:80/");
  ASSERT_TRUE(other_port.ok());
  EXPECT_EQ(other_port->HostHeader(), "provider.example:80");
}

TEST(HttpUrl, RejectsOtherSchemesCredentialsAndBadPorts) {
  for (const char* bad : {"httpx://example.com/", "ftp://x/", "https://", "http://",
                          "http://u:p@host/", "http://host:0/", "http://host:65536/",
                          "http://host:8x/", "http://host:/", "http://host/a b", "example.com"}) {
    EXPECT_EQ(ParseHttpUrl(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace aevatar::http
