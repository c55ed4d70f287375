// SPDX-License-Identifier: MIT
// batches.cpp - seeded shuffling and mini-batch assembly.
#include "tpu_data/batches.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace tpu_data {

std::uint64_t SplitMix64::next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

std::uint64_t SplitMix64::below(std::uint64_t bound) {
    // 2^64 mod bound values at the bottom would make some results likelier; skip them.
    const std::uint64_t threshold = (0 - bound) % bound;
    std::uint64_t x;
    do
        x = next();
    while (x < threshold);
    return x % bound;
}

float SplitMix64::normal() {
    const double u1 = (double(next() >> 11) + 1.0) / 9007199254740993.0;
    const double u2 = double(next() >> 11) / 9007199254740992.0;
    return float(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
}

std::vector<std::size_t> epoch_order(std::size_t n, std::uint64_t seed, std::uint64_t epoch) {
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t(0));
    SplitMix64 rng(seed ^ (epoch * 0xd1b54a32d192ed03ull));
    for (std::size_t i = n; i > 1; --i)
        std::swap(order[i - 1], order[rng.below(i)]);
    return order;
}

Batches::Batches(const Dataset &data, std::size_t batch_size, std::uint64_t seed, bool shuffle,
                 bool drop_last)
    : data_(data), batch_size_(batch_size), seed_(seed), shuffle_(shuffle), drop_last_(drop_last) {
    if (batch_size == 0)
        throw std::invalid_argument("Batches: batch size must be at least 1");
    start_epoch(0);
}

void Batches::start_epoch(std::uint64_t epoch) {
    if (shuffle_) {
        order_ = epoch_order(data_.count, seed_, epoch);
    } else {
        order_.resize(data_.count);
        std::iota(order_.begin(), order_.end(), std::size_t(0));
    }
    cursor_ = 0;
}

std::size_t Batches::batches_per_epoch() const {
    return drop_last_ ? data_.count / batch_size_ : (data_.count + batch_size_ - 1) / batch_size_;
}

bool Batches::next(Batch &batch) {
    const std::size_t left = order_.size() - cursor_;
    if (left == 0 || (drop_last_ && left < batch_size_))
        return false;
    const std::size_t n = std::min(left, batch_size_);
    const std::size_t width = data_.sample_size();
    batch.size = n;
    batch.features.resize(n * width);
    batch.labels.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t s = order_[cursor_ + i];
        std::copy_n(data_.sample(s), width, batch.features.data() + i * width);
        batch.labels[i] = data_.labels[s];
    }
    cursor_ += n;
    return true;
}

} // namespace tpu_data
