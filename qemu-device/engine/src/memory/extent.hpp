// SPDX-License-Identifier: MIT
// Extent2D: a strided block of rows in an on-chip buffer (unified buffer or accumulators) and the
// range check every instruction applies to it. All arithmetic is 64-bit; with 16-bit row counts
// and 32-bit offsets and strides it cannot overflow.
#pragma once

#include <cstdint>

namespace tpu::engine {

struct Extent2D {
    uint64_t addr = 0;      // offset of the first byte of row 0
    uint64_t stride = 0;    // bytes between the starts of consecutive rows
    uint32_t rows = 0;      // at least 1
    uint64_t row_bytes = 0; // at least 1

    // One past the highest byte touched.
    uint64_t end() const { return addr + (rows - 1) * stride + row_bytes; }
};

// True if every byte of e lies in [0, size). Otherwise false and *bad = the lowest offset of the
// extent that lies outside.
bool extent_fits(const Extent2D &e, uint64_t size, uint64_t *bad);

} // namespace tpu::engine
