// SPDX-License-Identifier: MIT
// Range check of a strided on-chip access: finds the first byte that falls outside the buffer.
#include "memory/extent.hpp"

namespace tpu::engine {

bool extent_fits(const Extent2D &e, uint64_t size, uint64_t *bad) {
    if (e.end() <= size)
        return true;
    // Rows start (and end) in ascending order, so every byte below the first row that ends past
    // the buffer is inside it; that row's first outside byte is the lowest offending offset.
    uint64_t first_row = 0;
    if (e.addr + e.row_bytes <= size) // row 0 fits, so stride > 0 here
        first_row = (size - e.row_bytes - e.addr) / e.stride + 1;
    uint64_t start = e.addr + first_row * e.stride;
    *bad = start > size ? start : size;
    return false;
}

} // namespace tpu::engine
