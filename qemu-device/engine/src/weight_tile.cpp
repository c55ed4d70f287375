// SPDX-License-Identifier: MIT
// Weight tile loading: widen int8 / bf16 weights to 32-bit words once per LOAD_W.
#include "weight_tile.hpp"

#include <cstring>

namespace tpu::engine {

WeightTile::WeightTile(uint32_t max_rows, uint32_t max_cols)
    : words_(uint64_t(max_rows) * max_cols) {}

void WeightTile::load(MxuType type, uint32_t k, uint32_t n, const uint8_t *src, uint64_t stride) {
    for (uint32_t i = 0; i < k; i++) {
        const uint8_t *row = src + i * stride;
        uint32_t *out = &words_[uint64_t(i) * n];
        if (type == MxuType::Int8) {
            for (uint32_t j = 0; j < n; j++)
                out[j] = uint32_t(int32_t(int8_t(row[j])));
        } else {
            for (uint32_t j = 0; j < n; j++) {
                uint16_t bits;
                std::memcpy(&bits, row + 2 * j, sizeof(bits));
                out[j] = uint32_t(bits) << 16;
            }
        }
    }
    type_ = type;
    k_ = k;
    n_ = n;
    loaded_ = true;
}

} // namespace tpu::engine
