#ifndef AEVATAR_METRICS_REGISTRY_H_
#define AEVATAR_METRICS_REGISTRY_H_

// A small Prometheus-style metrics registry shared by the three services.
//
// A family is a metric name with HELP text, a TYPE and fixed label names;
// each distinct tuple of label values is one series. Labels must be bounded
// sets (route patterns, verdicts, outcomes, status codes): never ids, tokens
// or user names. As a backstop, a family holds at most kMaxSeries series;
// further label tuples are counted under the value "other" in every label.
//
// Families are created at start-up and live as long as the Registry. Every
// method is thread-safe.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace aevatar::metrics {

// Series one family may hold before new label tuples fold into "other".
inline constexpr size_t kMaxSeries = 256;

// Latency buckets in seconds, from a fast API call to a long sandbox run.
std::vector<double> DefaultSecondsBuckets();

// A family of monotonically increasing counters (`_total` names).
class Counter {
 public:
  // Adds `by` (>= 0) to the series of `label_values` (one per label name).
  void Add(const std::vector<std::string>& label_values, double by = 1);
  // The series' value (0 when it was never touched); for tests and gauges.
  double Value(const std::vector<std::string>& label_values) const;

 private:
  friend class Registry;
  Counter(std::string name, std::string help, std::vector<std::string> labels);
  void Render(std::string& out) const;

  const std::string name_, help_;
  const std::vector<std::string> labels_;
  mutable absl::Mutex mu_;
  std::map<std::vector<std::string>, double> series_ ABSL_GUARDED_BY(mu_);
};

// A family of gauges: values that go up and down, set by their owner.
class Gauge {
 public:
  void Set(const std::vector<std::string>& label_values, double value);

 private:
  friend class Registry;
  Gauge(std::string name, std::string help, std::vector<std::string> labels);
  void Render(std::string& out) const;

  const std::string name_, help_;
  const std::vector<std::string> labels_;
  mutable absl::Mutex mu_;
  std::map<std::vector<std::string>, double> series_ ABSL_GUARDED_BY(mu_);
};

// A family of cumulative histograms (`_seconds` names): _bucket{le}, _sum,
// _count per series.
class Histogram {
 public:
  void Observe(const std::vector<std::string>& label_values, double value);

 private:
  friend class Registry;
  Histogram(std::string name, std::string help, std::vector<std::string> labels,
            std::vector<double> bounds);
  void Render(std::string& out) const;

  struct Series {
    std::vector<uint64_t> buckets;  // count of observations <= bounds_[i]
    uint64_t count = 0;
    double sum = 0;
  };
  const std::string name_, help_;
  const std::vector<std::string> labels_;
  const std::vector<double> bounds_;  // ascending, without +Inf
  mutable absl::Mutex mu_;
  std::map<std::vector<std::string>, Series> series_ ABSL_GUARDED_BY(mu_);
};

// Owns the families of one service and renders them in the Prometheus text
// exposition format (version 0.0.4), families in registration order.
class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Each returns a family that lives as long as the registry. `name` must be
  // a valid metric name and unique in the registry; `labels` valid label names.
  Counter* AddCounter(std::string name, std::string help, std::vector<std::string> labels = {});
  Gauge* AddGauge(std::string name, std::string help, std::vector<std::string> labels = {});
  Histogram* AddHistogram(std::string name, std::string help, std::vector<std::string> labels = {},
                          std::vector<double> bounds = DefaultSecondsBuckets());

  // The text exposition of every family: # HELP, # TYPE, then its samples.
  std::string Render() const;

 private:
  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<Counter>> counters_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Gauge>> gauges_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Histogram>> histograms_ ABSL_GUARDED_BY(mu_);
  // Registration order: (kind, index into that kind's vector).
  std::vector<std::pair<int, size_t>> order_ ABSL_GUARDED_BY(mu_);
};

}  // namespace aevatar::metrics

#endif  // AEVATAR_METRICS_REGISTRY_H_
