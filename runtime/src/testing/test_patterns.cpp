// SPDX-License-Identifier: MIT
// test_patterns.cpp - deterministic test matrices from a splitmix64 generator, and uniform
// values from std::mt19937.
#include "tpurt/testing/test_patterns.hpp"

#include <bit>
#include <random>

namespace tpurt {

namespace {

class SplitMix64 {
  public:
    explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }

  private:
    std::uint64_t state_;
};

} // namespace

std::vector<std::int8_t> random_int8(std::size_t count, std::uint64_t seed) {
    SplitMix64 rng(seed);
    std::vector<std::int8_t> out(count);
    for (auto &v : out)
        v = static_cast<std::int8_t>(rng.next() >> 56);
    return out;
}

std::vector<Bf16> random_bf16(std::size_t count, std::uint64_t seed) {
    SplitMix64 rng(seed);
    std::vector<Bf16> out(count);
    for (auto &v : out) {
        // An integer in [-511, 511] scaled by 2^-7: at most 9 bits, rounded to bf16's 8.
        const auto r = static_cast<std::int32_t>(rng.next() >> 54) - 511;
        v = Bf16::from_float(static_cast<float>(r) * 0x1p-7f);
    }
    return out;
}

std::vector<Bf16> wide_range_bf16(std::size_t count, std::uint64_t seed) {
    SplitMix64 rng(seed);
    std::vector<Bf16> out(count);
    constexpr std::uint32_t max_exponent_field = 127 + 40;
    for (auto &v : out) {
        const std::uint64_t r = rng.next();
        const auto sign = static_cast<std::uint16_t>((r & 1) << 15);
        const auto exponent = static_cast<std::uint16_t>((r >> 8) % (max_exponent_field + 1));
        const auto mantissa = static_cast<std::uint16_t>((r >> 24) & 0x7f);
        v.bits = static_cast<std::uint16_t>(sign | (exponent << 7) | mantissa);
    }
    return out;
}

std::vector<float> random_fp32(std::size_t count, std::uint64_t seed) {
    SplitMix64 rng(seed);
    std::vector<float> out(count);
    for (auto &v : out) {
        const std::uint64_t r = rng.next();
        if ((r & 0xff) == 0) { // about one in 256 is zero
            v = 0.0f;
            continue;
        }
        const std::uint32_t sign = static_cast<std::uint32_t>((r >> 8) & 1) << 31;
        const auto exponent = static_cast<std::uint32_t>(127 - 8 + (r >> 9) % 17);
        const auto mantissa = static_cast<std::uint32_t>((r >> 32) & 0x7fffff);
        v = std::bit_cast<float>(sign | (exponent << 23) | mantissa);
    }
    return out;
}

std::vector<float> uniform_fp32(std::size_t count, unsigned seed, float lo, float hi) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> out(count);
    for (float &x : out)
        x = d(rng);
    return out;
}

std::vector<float> small_ints(std::size_t count, unsigned seed, int range, float scale) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> d(-range, range);
    std::vector<float> out(count);
    for (float &x : out)
        x = static_cast<float>(d(rng)) / scale;
    return out;
}

} // namespace tpurt
