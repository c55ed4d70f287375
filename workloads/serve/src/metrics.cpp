// SPDX-License-Identifier: MIT
// metrics.cpp - counters and histograms in Prometheus' text format.
#include "tpu_serve/metrics.hpp"

#include <cstdio>

namespace tpu_serve {
namespace {

std::string number(double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}

std::vector<double> powers_of_two(std::size_t max) {
    std::vector<double> b;
    for (std::size_t v = 1; v < max; v *= 2)
        b.push_back(double(v));
    b.push_back(double(max));
    return b;
}

} // namespace

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double v) {
    std::size_t i = 0;
    while (i < bounds_.size() && v > bounds_[i])
        ++i;
    ++counts_[i];
    sum_ += v;
    ++count_;
}

std::string Histogram::render(const std::string &name) const {
    std::string s;
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < bounds_.size(); ++i) {
        cumulative += counts_[i];
        s += name + "_bucket{le=\"" + number(bounds_[i]) + "\"} " + std::to_string(cumulative) +
             "\n";
    }
    s += name + "_bucket{le=\"+Inf\"} " + std::to_string(count_) + "\n";
    s += name + "_sum " + number(sum_) + "\n";
    s += name + "_count " + std::to_string(count_) + "\n";
    return s;
}

Metrics::Metrics(std::size_t max_batch)
    : latency_({0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}),
      batch_size_(powers_of_two(max_batch)) {}

void Metrics::request(int status, double seconds) {
    std::lock_guard lock(mutex_);
    ++by_status_[status];
    if (status >= 400)
        ++failures_;
    latency_.observe(seconds);
}

void Metrics::batch(std::size_t rows) {
    std::lock_guard lock(mutex_);
    samples_ += rows;
    batch_size_.observe(double(rows));
}

std::string Metrics::render() const {
    std::lock_guard lock(mutex_);
    std::string s;
    s += "# HELP tpu_serve_requests_total Infer requests answered, by HTTP status.\n";
    s += "# TYPE tpu_serve_requests_total counter\n";
    if (by_status_.empty())
        s += "tpu_serve_requests_total{code=\"200\"} 0\n";
    for (const auto &[code, n] : by_status_)
        s += "tpu_serve_requests_total{code=\"" + std::to_string(code) + "\"} " +
             std::to_string(n) + "\n";
    s += "# HELP tpu_serve_request_failures_total Infer requests answered with an error (4xx, "
         "5xx).\n# TYPE tpu_serve_request_failures_total counter\n";
    s += "tpu_serve_request_failures_total " + std::to_string(failures_) + "\n";
    s += "# HELP tpu_serve_samples_total Samples inferred on the card.\n"
         "# TYPE tpu_serve_samples_total counter\n";
    s += "tpu_serve_samples_total " + std::to_string(samples_) + "\n";
    s += "# HELP tpu_serve_request_duration_seconds Infer request latency in the server (parse, "
         "queue, card, response).\n# TYPE tpu_serve_request_duration_seconds histogram\n";
    s += latency_.render("tpu_serve_request_duration_seconds");
    s += "# HELP tpu_serve_batch_size Samples per card batch (dynamic batching).\n"
         "# TYPE tpu_serve_batch_size histogram\n";
    s += batch_size_.render("tpu_serve_batch_size");
    return s;
}

} // namespace tpu_serve
