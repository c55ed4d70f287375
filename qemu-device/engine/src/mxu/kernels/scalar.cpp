// SPDX-License-Identifier: MIT
// Portable MXU kernels: the reference for the vector kernels, used on CPUs without AVX2+FMA.
// Each accumulator row is updated in place, k outermost, so memory is walked row-major. bf16
// keeps the even and odd chains of a block of 32 k for the row's columns and adds them to the
// accumulators at the block's end (mxu/bf16_numerics.hpp).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "mxu/bf16_numerics.hpp"
#include "mxu/kernels/kernels.hpp"

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

// NaN results are stored as the canonical NaN.
uint32_t fp_result(uint32_t acc) {
    return (acc & 0x7fffffffu) > 0x7f800000u ? kCanonicalNan : acc;
}

template <uint32_t (*Activation)(const uint8_t *, uint32_t),
          uint32_t (*Mac)(uint32_t, uint32_t, uint32_t), uint32_t (*Result)(uint32_t)>
void block(const WeightTile &tile, const MatmulArgs &args, uint32_t m0, uint32_t m1, uint32_t n0,
           uint32_t n1) {
    const uint32_t k = tile.k();
    const uint32_t n = tile.n();
    for (uint32_t m = m0; m < m1; m++) {
        const uint8_t *a = args.src_row(m);
        uint8_t *acc = args.acc + m * args.acc_stride + 4 * uint64_t(n0);
        if (!args.accumulate)
            std::memset(acc, 0, 4 * uint64_t(n1 - n0)); // int 0, +0.0f
        for (uint32_t i = 0; i < k; i++) {
            uint32_t x = Activation(a, i);
            const uint32_t *wr = tile.words() + uint64_t(i) * n + n0;
            for (uint32_t j = 0; j < n1 - n0; j++)
                store_word(acc + 4 * j, Mac(load_word(acc + 4 * j), x, wr[j]));
        }
        for (uint32_t j = 0; j < n1 - n0; j++)
            store_word(acc + 4 * j, Result(load_word(acc + 4 * j)));
    }
}

// bf16: per row, the chains E and O of every column over a block, then the combining add.
void bf16_block(const WeightTile &tile, const MatmulArgs &args, uint32_t m0, uint32_t m1,
                uint32_t n0, uint32_t n1) {
    const uint32_t k = tile.k();
    const uint32_t n = tile.n();
    const uint32_t cols = n1 - n0;
    std::vector<float> chains(2 * uint64_t(cols)); // E of every column, then O
    for (uint32_t m = m0; m < m1; m++) {
        const uint8_t *a = args.src_row(m);
        uint8_t *acc = args.acc + m * args.acc_stride + 4 * uint64_t(n0);
        if (!args.accumulate)
            std::memset(acc, 0, 4 * uint64_t(cols)); // +0.0f
        for (uint32_t b = 0; b < k; b += bf16::kBlock) {
            std::fill(chains.begin(), chains.end(), 0.0f);
            for (uint32_t i = b; i < k && i < b + bf16::kBlock; i++) {
                const float x = std::bit_cast<float>(bf16_activation(a, i));
                const uint32_t *wr = tile.words() + uint64_t(i) * n + n0;
                float *chain = chains.data() + (i % 2) * uint64_t(cols);
                for (uint32_t j = 0; j < cols; j++)
                    chain[j] = bf16::step(chain[j], x, std::bit_cast<float>(wr[j]));
            }
            for (uint32_t j = 0; j < cols; j++) {
                const float sum = bf16::combine(std::bit_cast<float>(load_word(acc + 4 * j)),
                                                chains[j], chains[cols + j]);
                store_word(acc + 4 * j, std::bit_cast<uint32_t>(sum));
            }
        }
        for (uint32_t j = 0; j < cols; j++)
            store_word(acc + 4 * j, fp_result(load_word(acc + 4 * j)));
    }
}

} // namespace

const RowKernels kScalarRowKernels{"scalar", block<int8_activation, int_mac, int_result>,
                                   bf16_block, block<fp32_activation, fp_mac, fp_result>};

} // namespace tpu::engine
