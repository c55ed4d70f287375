// SPDX-License-Identifier: MIT
// reference.cpp - the CPU golden model of the card's matmul (see reference.hpp).
//
// bf16 speed: a product of two bf16 values has at most 16 significant bits, so when it is a
// normal binary32 number it is exact and fmaf(a, b, acc) == acc + a * b. When every non-zero
// input lies in [2^-60, 2^60] all products are normal, and the loop uses the plain multiply-add
// (vectorisable, and cheap under emulation without FMA); otherwise it calls fmaf.
#include "tpurt/reference.hpp"

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

std::vector<float> widen(std::span<const Bf16> values, std::size_t count) {
    std::vector<float> out(count);
    for (std::size_t i = 0; i < count; ++i)
        out[i] = values[i].to_float();
    return out;
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
    const bool exact_products = products_are_normal(af, bf);
    for (std::uint32_t i = 0; i < m; ++i) {
        float *crow = &c[std::size_t{i} * n];
        std::fill(crow, crow + n, 0.0f);
        for (std::uint32_t p = 0; p < k; ++p) {
            const float av = af[std::size_t{i} * k + p];
            const float *brow = &bf[std::size_t{p} * n];
            if (exact_products) {
                for (std::uint32_t j = 0; j < n; ++j)
                    crow[j] = crow[j] + av * brow[j];
            } else {
                for (std::uint32_t j = 0; j < n; ++j)
                    crow[j] = std::fmaf(av, brow[j], crow[j]);
            }
        }
    }
}

} // namespace tpurt
