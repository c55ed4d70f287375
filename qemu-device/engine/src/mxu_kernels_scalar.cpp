// SPDX-License-Identifier: MIT
// Portable MXU row kernels: the reference for the vector kernels, used on CPUs without AVX2+FMA.
// The accumulator row is updated in place, k outermost, so memory is walked row-major.
#include <bit>
#include <cmath>
#include <cstring>

#include "mxu_kernels.hpp"

namespace tpu::engine {
namespace {

uint32_t load_word(const uint8_t *p) {
    uint32_t v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}

void store_word(uint8_t *p, uint32_t v) {
    std::memcpy(p, &v, sizeof(v));
}

void int8_row(const uint32_t *w, uint32_t k, uint32_t n, const uint8_t *a, uint8_t *acc,
              bool accumulate) {
    if (!accumulate)
        std::memset(acc, 0, 4 * uint64_t(n));
    for (uint32_t i = 0; i < k; i++) {
        uint32_t x = uint32_t(int32_t(int8_t(a[i])));
        const uint32_t *wr = w + uint64_t(i) * n;
        for (uint32_t j = 0; j < n; j++)
            store_word(acc + 4 * j, load_word(acc + 4 * j) + x * wr[j]);
    }
}

void bf16_row(const uint32_t *w, uint32_t k, uint32_t n, const uint8_t *a, uint8_t *acc,
              bool accumulate) {
    if (!accumulate)
        std::memset(acc, 0, 4 * uint64_t(n)); // +0.0f
    for (uint32_t i = 0; i < k; i++) {
        uint16_t bits;
        std::memcpy(&bits, a + 2 * i, sizeof(bits));
        float x = std::bit_cast<float>(uint32_t(bits) << 16);
        const uint32_t *wr = w + uint64_t(i) * n;
        for (uint32_t j = 0; j < n; j++) {
            float c = std::bit_cast<float>(load_word(acc + 4 * j));
            c = std::fma(x, std::bit_cast<float>(wr[j]), c);
            store_word(acc + 4 * j, std::bit_cast<uint32_t>(c));
        }
    }
}

} // namespace

const RowKernels kScalarRowKernels{"scalar", int8_row, bf16_row};

} // namespace tpu::engine
