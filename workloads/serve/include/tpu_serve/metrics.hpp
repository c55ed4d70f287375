// SPDX-License-Identifier: MIT
// metrics.hpp - the server's Prometheus metrics (text exposition format 0.0.4): infer requests by
// HTTP status, failures, request latency and card batch sizes as histograms, samples inferred.
// Thread-safe; render() is the body of GET /metrics.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace tpu_serve {

class Histogram {
  public:
    explicit Histogram(std::vector<double> upper_bounds);
    void observe(double v);
    // The histogram's lines for metric `name` (buckets, +Inf, sum, count).
    std::string render(const std::string &name) const;

  private:
    std::vector<double> bounds_;
    std::vector<std::uint64_t> counts_; // per bucket, not cumulative
    double sum_ = 0;
    std::uint64_t count_ = 0;
};

class Metrics {
  public:
    explicit Metrics(std::size_t max_batch);
    void request(int status, double seconds); // one infer request answered
    void batch(std::size_t rows);             // one card batch run
    std::string render() const;

  private:
    mutable std::mutex mutex_;
    std::map<int, std::uint64_t> by_status_;
    std::uint64_t failures_ = 0, samples_ = 0;
    Histogram latency_, batch_size_;
};

} // namespace tpu_serve
