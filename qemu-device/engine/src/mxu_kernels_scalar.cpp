// SPDX-License-Identifier: MIT
// Portable MXU kernels: the reference for the vector kernels, used on CPUs without AVX2+FMA.
// Each accumulator row is updated in place, k outermost, so memory is walked row-major. bf16
// walks k pair by pair, odd element first, with the card's bf16 step (bf16_numerics.hpp).
#include <bit>
#include <cmath>
#include <cstring>

#include "bf16_numerics.hpp"
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

// Activation k of a row as the 32-bit word the tile's words are multiplied with.
uint32_t int8_activation(const uint8_t *a, uint32_t k) {
    return uint32_t(int32_t(int8_t(a[k])));
}

uint32_t bf16_activation(const uint8_t *a, uint32_t k) {
    uint16_t bits;
    std::memcpy(&bits, a + 2 * k, sizeof(bits));
    return uint32_t(bits) << 16;
}

uint32_t fp32_activation(const uint8_t *a, uint32_t k) {
    return load_word(a + 4 * k);
}

uint32_t int_mac(uint32_t acc, uint32_t a, uint32_t w) {
    return acc + a * w;
}

uint32_t int_result(uint32_t acc) {
    return acc;
}

uint32_t fp_mac(uint32_t acc, uint32_t a, uint32_t w) {
    float c = std::fma(std::bit_cast<float>(a), std::bit_cast<float>(w), std::bit_cast<float>(acc));
    return std::bit_cast<uint32_t>(c);
}

uint32_t bf16_mac(uint32_t acc, uint32_t a, uint32_t w) {
    return std::bit_cast<uint32_t>(
        bf16::step(std::bit_cast<float>(acc), std::bit_cast<float>(a), std::bit_cast<float>(w)));
}

// The k of step i: ascending, or pair by pair with the odd element first (a last odd k alone).
uint32_t ascending(uint32_t i, uint32_t) {
    return i;
}

uint32_t odd_first(uint32_t i, uint32_t k) {
    return (i ^ 1u) < k ? i ^ 1u : i;
}

// NaN results are stored as the canonical NaN.
uint32_t fp_result(uint32_t acc) {
    return (acc & 0x7fffffffu) > 0x7f800000u ? kCanonicalNan : acc;
}

template <uint32_t (*Activation)(const uint8_t *, uint32_t),
          uint32_t (*Mac)(uint32_t, uint32_t, uint32_t), uint32_t (*Result)(uint32_t),
          uint32_t (*Order)(uint32_t, uint32_t) = ascending>
void block(const WeightTile &tile, const MatmulArgs &args, uint32_t m0, uint32_t m1, uint32_t n0,
           uint32_t n1) {
    const uint32_t k = tile.k();
    const uint32_t n = tile.n();
    for (uint32_t m = m0; m < m1; m++) {
        const uint8_t *a = args.src_row(m);
        uint8_t *acc = args.acc + m * args.acc_stride + 4 * uint64_t(n0);
        if (!args.accumulate)
            std::memset(acc, 0, 4 * uint64_t(n1 - n0)); // int 0, +0.0f
        for (uint32_t s = 0; s < k; s++) {
            const uint32_t i = Order(s, k);
            uint32_t x = Activation(a, i);
            const uint32_t *wr = tile.words() + uint64_t(i) * n + n0;
            for (uint32_t j = 0; j < n1 - n0; j++)
                store_word(acc + 4 * j, Mac(load_word(acc + 4 * j), x, wr[j]));
        }
        for (uint32_t j = 0; j < n1 - n0; j++)
            store_word(acc + 4 * j, Result(load_word(acc + 4 * j)));
    }
}

} // namespace

const RowKernels kScalarRowKernels{"scalar", block<int8_activation, int_mac, int_result>,
                                   block<bf16_activation, bf16_mac, fp_result, odd_first>,
                                   block<fp32_activation, fp_mac, fp_result>};

} // namespace tpu::engine
