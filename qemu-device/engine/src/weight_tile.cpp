// SPDX-License-Identifier: MIT
// Weight tile loading: widen int8 / bf16 / fp32 weights to 32-bit words once per LOAD_W, and
// pack int8 tiles for the VNNI kernels.
#include "weight_tile.hpp"

#include <algorithm>
#include <cstring>

namespace tpu::engine {
namespace {

uint32_t widen(MxuType type, const uint8_t *src, uint32_t i) {
    switch (type) {
    case MxuType::Int8:
        return uint32_t(int32_t(int8_t(src[i])));
    case MxuType::Bf16: {
        uint16_t bits;
        std::memcpy(&bits, src + 2 * uint64_t(i), sizeof(bits));
        return uint32_t(bits) << 16;
    }
    default: {
        uint32_t bits;
        std::memcpy(&bits, src + 4 * uint64_t(i), sizeof(bits));
        return bits;
    }
    }
}

} // namespace

WeightTile::WeightTile(uint32_t max_rows, uint32_t max_cols)
    : words_(uint64_t(max_rows) * max_cols), quads_(uint64_t((max_rows + 3) / 4) * max_cols),
      bias_(max_cols) {}

void WeightTile::begin_load(MxuType type, uint32_t k, uint32_t n, bool transposed) {
    type_ = type;
    k_ = k;
    n_ = n;
    transposed_ = transposed;
    loaded_ = false;
}

void WeightTile::load_row(uint32_t r, const uint8_t *src) {
    if (transposed_) {
        for (uint32_t i = 0; i < k_; i++)
            words_[uint64_t(i) * n_ + r] = widen(type_, src, i);
    } else {
        uint32_t *out = &words_[uint64_t(r) * n_];
        for (uint32_t j = 0; j < n_; j++)
            out[j] = widen(type_, src, j);
    }
}

void WeightTile::finish_load() {
    if (type_ == MxuType::Int8)
        pack_int8_quads();
    loaded_ = true;
}

void WeightTile::pack_int8_quads() {
    uint32_t *__restrict sums = reinterpret_cast<uint32_t *>(bias_.data());
    std::fill_n(sums, n_, 0);
    for (uint32_t k0 = 0; k0 < k_; k0 += 4) {
        // Rows past K read as zero weights.
        const uint32_t *rows[4];
        for (uint32_t i = 0; i < 4; i++)
            rows[i] = k0 + i < k_ ? &words_[uint64_t(k0 + i) * n_] : nullptr;
        uint32_t *__restrict out = &quads_[uint64_t(k0 / 4) * n_];
        if (rows[3]) {
            for (uint32_t j = 0; j < n_; j++) {
                uint32_t w0 = rows[0][j], w1 = rows[1][j], w2 = rows[2][j], w3 = rows[3][j];
                out[j] = (w0 & 0xff) | (w1 & 0xff) << 8 | (w2 & 0xff) << 16 | w3 << 24;
                sums[j] += w0 + w1 + w2 + w3;
            }
            continue;
        }
        for (uint32_t j = 0; j < n_; j++) {
            uint32_t quad = 0;
            for (uint32_t i = 0; i < 4 && rows[i]; i++) {
                quad |= (rows[i][j] & 0xff) << (8 * i);
                sums[j] += rows[i][j];
            }
            out[j] = quad;
        }
    }
    for (uint32_t j = 0; j < n_; j++)
        sums[j] *= 0u - 128u; // -128 * column sum, wrapping
}

void WeightTile::load(MxuType type, uint32_t k, uint32_t n, const uint8_t *src, uint64_t stride,
                      bool transposed) {
    begin_load(type, k, n, transposed);
    for (uint32_t r = 0; r < source_rows(); r++)
        load_row(r, src + r * stride);
    finish_load();
}

} // namespace tpu::engine
