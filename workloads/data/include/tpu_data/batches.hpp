// SPDX-License-Identifier: MIT
// batches.hpp - mini-batches over a Dataset in a seeded, reproducible order: each epoch draws a
// fresh permutation (Fisher-Yates over a SplitMix64 stream, the same on every platform and
// standard library), and hands out contiguous copies of the samples and labels batch by batch.
#pragma once

#include "tpu_data/dataset.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tpu_data {

// SplitMix64: a small, well-mixed generator whose output is fixed by its seed.
class SplitMix64 {
  public:
    explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next();
    // Uniform in [0, bound) without modulo bias; bound > 0.
    std::uint64_t below(std::uint64_t bound);
    // Normal(0, 1) by Box-Muller from the next two outputs (the models' initialisations).
    float normal();

  private:
    std::uint64_t state_;
};

// The permutation of 0..n-1 that epoch `epoch` of a run seeded with `seed` visits.
std::vector<std::size_t> epoch_order(std::size_t n, std::uint64_t seed, std::uint64_t epoch);

struct Batch {
    std::size_t size = 0;        // samples in this batch (the last one may be short)
    std::vector<float> features; // size x sample_size
    std::vector<std::uint8_t> labels;
};

class Batches {
  public:
    // Batches of `batch_size` over `data` (which must outlive this), shuffled per epoch when
    // `shuffle` is set; with `drop_last` a short final batch is skipped.
    Batches(const Dataset &data, std::size_t batch_size, std::uint64_t seed, bool shuffle = true,
            bool drop_last = false);

    void start_epoch(std::uint64_t epoch); // restarts at the first batch of that epoch's order
    bool next(Batch &batch);               // false once the epoch is exhausted
    std::size_t batches_per_epoch() const;

  private:
    const Dataset &data_;
    std::size_t batch_size_;
    std::uint64_t seed_;
    bool shuffle_;
    bool drop_last_;
    std::vector<std::size_t> order_;
    std::size_t cursor_ = 0;
};

} // namespace tpu_data
