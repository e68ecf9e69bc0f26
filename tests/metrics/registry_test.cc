#include "metrics/registry.h"

#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "base/api_error.h"
#include "gtest/gtest.h"
#include "metrics/http_metrics.h"
#include "metrics/text_format.h"

namespace aevatar::metrics {
namespace {

TEST(MetricsTextFormat, EscapesLabelValuesAndHelp) {
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  EXPECT_EQ(EscapeHelp("line one\nback\\slash \"quoted\""), "line one\\nback\\\\slash \"quoted\"");
}

TEST(MetricsTextFormat, SpellsValuesAsTheFormatExpects) {
  EXPECT_EQ(FormatValue(3), "3");
  EXPECT_EQ(FormatValue(0.25), "0.25");
  constexpr double kInf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(FormatValue(kInf), "+Inf");
  EXPECT_EQ(FormatValue(-kInf), "-Inf");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::quiet_NaN()), "NaN");
}

TEST(MetricsRegistry, RendersHelpTypeAndSamplesInRegistrationOrder) {
  Registry registry;
  Counter* counter = registry.AddCounter("x_total", "Things.", {"kind"});
  Gauge* gauge = registry.AddGauge("x_depth", "Depth.");
  counter->Add({"a"});
  counter->Add({"a"}, 2);
  counter->Add({"b\"q"});
  gauge->Set({}, 7);
  const std::string text = registry.Render();
  EXPECT_EQ(text,
            "# HELP x_total Things.\n"
            "# TYPE x_total counter\n"
            "x_total{kind=\"a\"} 3\n"
            "x_total{kind=\"b\\\"q\"} 1\n"
            "# HELP x_depth Depth.\n"
            "# TYPE x_depth gauge\n"
            "x_depth 7\n");
  EXPECT_EQ(counter->Value({"a"}), 3);
  EXPECT_EQ(counter->Value({"never"}), 0);
}

TEST(MetricsRegistry, HistogramBucketsAreCumulativeWithSumAndCount) {
  Registry registry;
  Histogram* histogram = registry.AddHistogram("h_seconds", "Latency.", {"route"}, {0.1, 1});
  histogram->Observe({"/a"}, 0.05);
  histogram->Observe({"/a"}, 0.5);
  histogram->Observe({"/a"}, 5);
  const std::string text = registry.Render();
  EXPECT_TRUE(absl::StrContains(text, "# TYPE h_seconds histogram\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "h_seconds_bucket{route=\"/a\",le=\"0.1\"} 1\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "h_seconds_bucket{route=\"/a\",le=\"1\"} 2\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "h_seconds_bucket{route=\"/a\",le=\"+Inf\"} 3\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "h_seconds_sum{route=\"/a\"} 5.55\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "h_seconds_count{route=\"/a\"} 3\n")) << text;
}

TEST(MetricsRegistry, AnUnlabelledHistogramShowsItsZeroSeriesBeforeTheFirstSample) {
  Registry registry;
  registry.AddHistogram("idle_seconds", "Idle.", {}, {1});
  const std::string text = registry.Render();
  EXPECT_TRUE(absl::StrContains(text, "idle_seconds_bucket{le=\"+Inf\"} 0\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "idle_seconds_count 0\n")) << text;
}

TEST(MetricsRegistry, SeriesBeyondTheCapFoldIntoOther) {
  Registry registry;
  Counter* counter = registry.AddCounter("many_total", "Many.", {"k"});
  for (size_t i = 0; i < kMaxSeries + 10; ++i) counter->Add({"v" + std::to_string(i)});
  EXPECT_EQ(counter->Value({"other"}), 10);
  EXPECT_EQ(counter->Value({"v0"}), 1);
}

TEST(MetricsRegistry, CountsFromManyThreadsAddUp) {
  Registry registry;
  Counter* counter = registry.AddCounter("c_total", "C.", {"k"});
  Histogram* histogram = registry.AddHistogram("c_seconds", "C.");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        counter->Add({"x"});
        histogram->Observe({}, 0.001);
        if (i % 100 == 0) registry.Render();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(counter->Value({"x"}), 4000);
  EXPECT_TRUE(absl::StrContains(registry.Render(), "c_seconds_count 4000\n"));
}

http::Request RequestFrom(const std::string& address, const std::string& authorization = "") {
  http::Request request;
  request.method = "GET";
  request.path = request.target = "/metrics";
  request.remote_address = address;
  if (!authorization.empty()) request.headers.Set("Authorization", authorization);
  return request;
}

TEST(MetricsAccess, WithoutATokenOnlyLoopbackPeersRead) {
  EXPECT_TRUE(CheckMetricsAccess(RequestFrom("127.0.0.1"), "").ok());
  EXPECT_TRUE(CheckMetricsAccess(RequestFrom("::1"), "").ok());
  EXPECT_TRUE(CheckMetricsAccess(RequestFrom("::ffff:127.0.0.1"), "").ok());
  const absl::Status remote = CheckMetricsAccess(RequestFrom("10.1.2.3"), "");
  EXPECT_EQ(base::ApiCode(remote), "METRICS_FORBIDDEN");
  EXPECT_EQ(base::HttpStatusFor(remote), 403);
  EXPECT_FALSE(CheckMetricsAccess(RequestFrom(""), "").ok());
}

TEST(MetricsAccess, WithoutATokenALoopbackPeerThatIsAProxyIsRefused) {
  // NyxID's route proxy reaches an upstream on 127.0.0.1 for any caller.
  for (const char* header : {"Via", "Forwarded", "X-Forwarded-For", "X-NyxID-Delegation-Token"}) {
    http::Request request = RequestFrom("127.0.0.1");
    request.headers.Set(header, "1.1 nyxid");
    const absl::Status proxied = CheckMetricsAccess(request, "");
    EXPECT_EQ(base::ApiCode(proxied), "METRICS_FORBIDDEN") << header;
  }
}

TEST(MetricsAccess, WithATokenEveryPeerNeedsIt) {
  const std::string token = "metrics-token-123";
  EXPECT_TRUE(CheckMetricsAccess(RequestFrom("10.1.2.3", "Bearer " + token), token).ok());
  for (const std::string& header : {std::string(""), std::string("Bearer wrong"),
                                    std::string("Bearer metrics-token-1234"), token}) {
    const absl::Status loopback = CheckMetricsAccess(RequestFrom("127.0.0.1", header), token);
    EXPECT_EQ(base::ApiCode(loopback), "METRICS_UNAUTHORIZED") << header;
    EXPECT_EQ(base::HttpStatusFor(loopback), 401);
  }
}

TEST(MetricsAccess, ReadableNeedsAccessFirstThenKeptMetrics) {
  EXPECT_TRUE(CheckMetricsReadable(RequestFrom("127.0.0.1"), "", /*kept=*/true).ok());
  const absl::Status none = CheckMetricsReadable(RequestFrom("127.0.0.1"), "", /*kept=*/false);
  EXPECT_EQ(base::ApiCode(none), "METRICS_UNAVAILABLE");
  EXPECT_EQ(base::HttpStatusFor(none), 503);
  // A peer that may not read learns nothing about whether metrics are kept.
  const absl::Status remote = CheckMetricsReadable(RequestFrom("10.1.2.3"), "", /*kept=*/false);
  EXPECT_EQ(base::ApiCode(remote), "METRICS_FORBIDDEN");
  EXPECT_EQ(base::HttpStatusFor(remote), 403);
}

TEST(HttpMetrics, CountsRequestsByRouteAndStatusWithLatency) {
  Registry registry;
  HttpMetrics http(registry, "svc");
  http.Observe("/items/{id}", 200, 0.002);
  http.Observe("/items/{id}", 404, 0.001);
  const std::string text = registry.Render();
  EXPECT_TRUE(
      absl::StrContains(text, "svc_http_requests_total{route=\"/items/{id}\",status=\"200\"} 1"))
      << text;
  EXPECT_TRUE(
      absl::StrContains(text, "svc_http_request_duration_seconds_count{route=\"/items/{id}\"} 2"))
      << text;
}

}  // namespace
}  // namespace aevatar::metrics
