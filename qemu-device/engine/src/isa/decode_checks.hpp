// SPDX-License-Identifier: MIT
// Small checks shared by the instruction decoders (decoder.cpp, decoder_vpu.cpp): element sizes,
// alignment and on-chip range checks in the order the card applies them.
#pragma once

#include <cstdint>

#include "executor/fault.hpp"
#include "memory/extent.hpp"
#include "tpu_hw.h"

namespace tpu::engine {

// Size of a dtype's element: 1, 2, 4, 4 for INT8, BF16, INT32, FP32. dtype must be valid.
inline uint32_t dtype_bytes(uint8_t dtype) {
    switch (dtype) {
    case TPU_DT_INT8:
        return 1;
    case TPU_DT_BF16:
        return 2;
    default:
        return 4; // TPU_DT_INT32, TPU_DT_FP32
    }
}

inline bool valid_dtype(uint8_t dtype) {
    return dtype <= TPU_DT_FP32;
}

inline bool is_aligned(uint64_t value, uint64_t align) {
    return value % align == 0;
}

// status with the lowest offending offset if e does not lie inside [0, size).
inline Fault check_range(const Extent2D &e, uint64_t size, uint32_t status) {
    uint64_t bad;
    if (!extent_fits(e, size, &bad))
        return make_fault(status, bad);
    return kOk;
}

// The first of several extents that does not fit in the unified buffer.
template <class... Extents> Fault check_ub(uint64_t ub_bytes, const Extents &...extents) {
    Fault f = kOk;
    ((f.ok() ? (void)(f = check_range(extents, ub_bytes, TPU_ERR_UB_RANGE)) : (void)0), ...);
    return f;
}

} // namespace tpu::engine
