// SPDX-License-Identifier: MIT
// Types shared by the matrix unit's implementations (fast functional mode, cycle-accurate
// systolic model) and the executor: the two input formats and the operands of one MATMUL.
#pragma once

#include <cstdint>

namespace tpu::engine {

// int8 x int8 -> int32 (wrap-around), or bf16 x bf16 -> fp32 (fmaf chain in ascending k).
enum class MxuType : uint8_t { Int8, Bf16 };

inline uint32_t mxu_elem_bytes(MxuType t) {
    return t == MxuType::Int8 ? 1 : 2;
}

// One MATMUL against the loaded weight tile (K x N): for m < rows, n < N,
// acc row m, element n = (accumulate ? acc : 0) + sum over k ascending of a[m][k] * w[k][n].
// Pointers are into the on-chip buffers; the executor has range-checked every row.
struct MatmulArgs {
    const uint8_t *src = nullptr; // activation row 0: K elements of int8 or bf16
    uint64_t src_stride = 0;      // bytes between activation rows
    uint8_t *acc = nullptr;       // accumulator row 0: N int32 or fp32 elements
    uint64_t acc_stride = 0;      // bytes between accumulator rows
    uint32_t rows = 0;            // M
    bool accumulate = false;      // add into the accumulators instead of starting at 0
};

} // namespace tpu::engine
