// SPDX-License-Identifier: MIT
// reference.cpp - the CPU golden model of the card's matmul (see reference.hpp).
//
// bf16 (spec 1.3): per output, blocks of 32 k from k = 0; in a block the even-k and the odd-k
// products are summed in two chains from +0, each step chain = FTZ(RNE(DAZ(chain) + DAZ(a)
// DAZ(b))): exact product, one rounding, subnormal inputs read as zero, results tiny after
// rounding (unbounded exponent) flushed to signed zero; then acc = add(acc, add(E, O)) with
// add(x, y) = FTZ(RNE(DAZ(x) + DAZ(y))), exact when tiny, so its flush is a magnitude test.
// Speed: a product of two bf16 values has at most 16 significant bits, so when it is a normal
// binary32 number it is exact and the step is acc + a * b, whose exact value lies on the
// 2^-149 grid: a tiny result is then exact, and the flush is a plain magnitude test. When every
// non-zero input lies in [2^-60, 2^60] all products are normal and the loop uses that (cheap
// under emulation without FMA); otherwise each step calls fmaf and, for a result of exactly
// 2^-126, decides the flush from the exact sum in double.
#include "tpurt/golden/reference.hpp"

#include "tpurt/error.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace tpurt {

namespace {

void check_sizes(std::size_t a, std::size_t b, std::size_t c, std::uint32_t m, std::uint32_t k,
                 std::uint32_t n) {
    if (a < std::uint64_t{m} * k || b < std::uint64_t{k} * n || c < std::uint64_t{m} * n)
        throw Error(ErrorCode::InvalidArgument, "reference_matmul: spans too small for " +
                                                    std::to_string(m) + "x" + std::to_string(k) +
                                                    "x" + std::to_string(n));
}

float daz(float x) {
    return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x;
}

// bf16 widened to binary32, subnormals read as zero.
std::vector<float> widen(std::span<const Bf16> values, std::size_t count) {
    std::vector<float> out(count);
    for (std::size_t i = 0; i < count; ++i)
        out[i] = daz(values[i].to_float());
    return out;
}

// A step whose a * b is exact and normal.
float step_exact_product(float acc, float a, float b) {
    const float r = acc + a * b;
    return std::fabs(r) < 0x1p-126f ? std::copysign(0.0f, r) : r;
}

// A step on DAZ'd inputs. fmaf rounds to the subnormal grid, which hides the unbounded rounding
// only when it gives exactly 2^-126; then both terms are below 2^-100 and their sum fits a
// double, and the result reaches 2^-126 iff the sum is at least 2^-126 - 2^-151.
float step_general(float acc, float a, float b) {
    const float r = std::fmaf(a, b, acc);
    const float mag = std::fabs(r);
    if (std::isnan(r) || mag > 0x1p-126f)
        return r;
    if (mag < 0x1p-126f)
        return std::copysign(0.0f, r);
    const double exact = double(acc) + double(a) * double(b);
    return std::fabs(exact) >= 0x1p-126 - 0x1p-151 ? r : std::copysign(0.0f, r);
}

// The block's add of two terms that are zero or normal (DAZ'd): a tiny sum is exact.
float block_add(float x, float y) {
    const float r = daz(x) + daz(y);
    return std::fabs(r) < 0x1p-126f ? std::copysign(0.0f, r) : r;
}

constexpr std::uint32_t block_k = 32;

template <float (*Step)(float, float, float)>
void bf16_rows(const std::vector<float> &af, const std::vector<float> &bf, std::span<float> c,
               std::uint32_t m, std::uint32_t k, std::uint32_t n) {
    std::vector<float> chains(2 * std::size_t{n}); // even chain of every column, then odd
    for (std::uint32_t i = 0; i < m; ++i) {
        float *crow = &c[std::size_t{i} * n];
        const float *arow = &af[std::size_t{i} * k];
        std::fill(crow, crow + n, 0.0f);
        for (std::uint32_t b = 0; b < k; b += block_k) {
            std::fill(chains.begin(), chains.end(), 0.0f);
            for (std::uint32_t p = b; p < k && p < b + block_k; ++p) {
                const float *brow = &bf[std::size_t{p} * n];
                float *chain = &chains[(p % 2) * std::size_t{n}];
                for (std::uint32_t j = 0; j < n; ++j)
                    chain[j] = Step(chain[j], arow[p], brow[j]);
            }
            for (std::uint32_t j = 0; j < n; ++j)
                crow[j] = block_add(crow[j], block_add(chains[j], chains[n + j]));
        }
    }
}

bool products_are_normal(const std::vector<float> &a, const std::vector<float> &b) {
    const auto in_range = [](const std::vector<float> &values) {
        for (const float v : values) {
            const float mag = std::fabs(v);
            if (v != 0.0f && !(mag >= 0x1p-60f && mag <= 0x1p60f))
                return false;
        }
        return true;
    };
    return in_range(a) && in_range(b);
}

} // namespace

void reference_matmul(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                      std::span<std::int32_t> c, std::uint32_t m, std::uint32_t k,
                      std::uint32_t n) {
    check_sizes(a.size(), b.size(), c.size(), m, k, n);
    std::vector<std::uint32_t> row(n); // unsigned: wrap-around is defined
    for (std::uint32_t i = 0; i < m; ++i) {
        std::fill(row.begin(), row.end(), 0u);
        for (std::uint32_t p = 0; p < k; ++p) {
            const std::uint32_t av = static_cast<std::uint32_t>(std::int32_t{a[i * k + p]});
            const std::int8_t *brow = &b[std::size_t{p} * n];
            for (std::uint32_t j = 0; j < n; ++j)
                row[j] += av * static_cast<std::uint32_t>(std::int32_t{brow[j]});
        }
        for (std::uint32_t j = 0; j < n; ++j)
            c[std::size_t{i} * n + j] = static_cast<std::int32_t>(row[j]);
    }
}

void reference_matmul(std::span<const Bf16> a, std::span<const Bf16> b, std::span<float> c,
                      std::uint32_t m, std::uint32_t k, std::uint32_t n) {
    check_sizes(a.size(), b.size(), c.size(), m, k, n);
    const std::vector<float> af = widen(a, std::size_t{m} * k);
    const std::vector<float> bf = widen(b, std::size_t{k} * n);
    if (products_are_normal(af, bf))
        bf16_rows<step_exact_product>(af, bf, c, m, k, n);
    else
        bf16_rows<step_general>(af, bf, c, m, k, n);
}

} // namespace tpurt
