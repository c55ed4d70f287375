// SPDX-License-Identifier: MIT
// Bitwise comparison of result buffers for exactness checks, with a readable first difference.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

namespace tpu::test {

// "" if the count 32-bit words at a and b are identical, else where they first differ.
inline std::string first_difference(const void *a, const void *b, uint64_t count) {
    for (uint64_t i = 0; i < count; i++) {
        uint32_t x, y;
        std::memcpy(&x, static_cast<const uint8_t *>(a) + 4 * i, 4);
        std::memcpy(&y, static_cast<const uint8_t *>(b) + 4 * i, 4);
        if (x != y)
            return "element " + std::to_string(i) + ": " + std::to_string(x) +
                   " != " + std::to_string(y) + " (bits)";
    }
    return "";
}

} // namespace tpu::test
