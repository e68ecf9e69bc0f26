#include "metrics/registry.h"

#include <algorithm>
#include <utility>

#include "metrics/text_format.h"

namespace aevatar::metrics {
namespace {

enum Kind { kCounter, kGauge, kHistogram };

// The key a series is stored under: the values as given (padded or cut to
// the label count), or all "other" once the family is full.
template <typename Map>
std::vector<std::string> SeriesKey(const Map& series, size_t label_count,
                                   const std::vector<std::string>& values) {
  std::vector<std::string> key(values.begin(),
                               values.begin() + std::min(values.size(), label_count));
  key.resize(label_count);
  if (series.size() >= kMaxSeries && series.find(key) == series.end()) {
    key.assign(label_count, "other");
  }
  return key;
}

}  // namespace

std::vector<double> DefaultSecondsBuckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300};
}

Counter::Counter(std::string name, std::string help, std::vector<std::string> labels)
    : name_(std::move(name)), help_(std::move(help)), labels_(std::move(labels)) {}

void Counter::Add(const std::vector<std::string>& label_values, double by) {
  if (!(by >= 0)) return;  // counters never go down (and NaN is not a count)
  absl::MutexLock lock(&mu_);
  series_[SeriesKey(series_, labels_.size(), label_values)] += by;
}

double Counter::Value(const std::vector<std::string>& label_values) const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> key = label_values;
  key.resize(labels_.size());
  auto it = series_.find(key);
  return it == series_.end() ? 0 : it->second;
}

void Counter::Render(std::string& out) const {
  AppendHeader(out, name_, help_, "counter");
  absl::MutexLock lock(&mu_);
  for (const auto& [values, value] : series_) AppendSample(out, name_, labels_, values, value);
}

Gauge::Gauge(std::string name, std::string help, std::vector<std::string> labels)
    : name_(std::move(name)), help_(std::move(help)), labels_(std::move(labels)) {}

void Gauge::Set(const std::vector<std::string>& label_values, double value) {
  absl::MutexLock lock(&mu_);
  series_[SeriesKey(series_, labels_.size(), label_values)] = value;
}

void Gauge::Render(std::string& out) const {
  AppendHeader(out, name_, help_, "gauge");
  absl::MutexLock lock(&mu_);
  // A label-less gauge always has its one series, 0 until set.
  if (labels_.empty() && series_.empty()) AppendSample(out, name_, labels_, {}, 0);
  for (const auto& [values, value] : series_) AppendSample(out, name_, labels_, values, value);
}

Histogram::Histogram(std::string name, std::string help, std::vector<std::string> labels,
                     std::vector<double> bounds)
    : name_(std::move(name)),
      help_(std::move(help)),
      labels_(std::move(labels)),
      bounds_(std::move(bounds)) {}

void Histogram::Observe(const std::vector<std::string>& label_values, double value) {
  absl::MutexLock lock(&mu_);
  Series& series = series_[SeriesKey(series_, labels_.size(), label_values)];
  if (series.buckets.empty()) series.buckets.assign(bounds_.size(), 0);
  for (size_t i = 0; i < bounds_.size(); ++i) {
    if (value <= bounds_[i]) ++series.buckets[i];
  }
  ++series.count;
  series.sum += value;
}

void Histogram::Render(std::string& out) const {
  AppendHeader(out, name_, help_, "histogram");
  absl::MutexLock lock(&mu_);
  // A label-less histogram shows its zero series before the first sample,
  // so a scraper sees the family (and rate() has a starting point).
  std::map<std::vector<std::string>, Series> shown = series_;
  if (labels_.empty() && shown.empty()) shown[{}].buckets.assign(bounds_.size(), 0);
  const std::string bucket = name_ + "_bucket";
  for (const auto& [values, series] : shown) {
    for (size_t i = 0; i < bounds_.size(); ++i) {
      AppendSample(out, bucket, labels_, values, static_cast<double>(series.buckets[i]), "le",
                   FormatValue(bounds_[i]));
    }
    AppendSample(out, bucket, labels_, values, static_cast<double>(series.count), "le", "+Inf");
    AppendSample(out, name_ + "_sum", labels_, values, series.sum);
    AppendSample(out, name_ + "_count", labels_, values, static_cast<double>(series.count));
  }
}

Counter* Registry::AddCounter(std::string name, std::string help, std::vector<std::string> labels) {
  absl::MutexLock lock(&mu_);
  counters_.push_back(
      std::unique_ptr<Counter>(new Counter(std::move(name), std::move(help), std::move(labels))));
  order_.emplace_back(kCounter, counters_.size() - 1);
  return counters_.back().get();
}

Gauge* Registry::AddGauge(std::string name, std::string help, std::vector<std::string> labels) {
  absl::MutexLock lock(&mu_);
  gauges_.push_back(
      std::unique_ptr<Gauge>(new Gauge(std::move(name), std::move(help), std::move(labels))));
  order_.emplace_back(kGauge, gauges_.size() - 1);
  return gauges_.back().get();
}

Histogram* Registry::AddHistogram(std::string name, std::string help,
                                  std::vector<std::string> labels, std::vector<double> bounds) {
  std::sort(bounds.begin(), bounds.end());
  absl::MutexLock lock(&mu_);
  histograms_.push_back(std::unique_ptr<Histogram>(
      new Histogram(std::move(name), std::move(help), std::move(labels), std::move(bounds))));
  order_.emplace_back(kHistogram, histograms_.size() - 1);
  return histograms_.back().get();
}

std::string Registry::Render() const {
  std::string out;
  absl::MutexLock lock(&mu_);
  for (const auto& [kind, index] : order_) {
    if (kind == kCounter) counters_[index]->Render(out);
    if (kind == kGauge) gauges_[index]->Render(out);
    if (kind == kHistogram) histograms_[index]->Render(out);
  }
  return out;
}

}  // namespace aevatar::metrics
