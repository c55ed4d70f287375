// SPDX-License-Identifier: MIT
// Types shared by the matrix unit's implementations (fast functional mode, cycle-accurate
// systolic model) and the executor: the three input formats and the operands of one MATMUL.
#pragma once

#include <cstdint>

namespace tpu::engine {

// int8 x int8 -> int32 (wrap-around), or bf16 x bf16 / fp32 x fp32 -> fp32 (fmaf chain in
// ascending k).
enum class MxuType : uint8_t { Int8, Bf16, Fp32 };

inline uint32_t mxu_elem_bytes(MxuType t) {
    switch (t) {
    case MxuType::Int8:
        return 1;
    case MxuType::Bf16:
        return 2;
    default:
        return 4;
    }
}

// The quiet NaN every floating-point MATMUL result that is NaN is stored as (docs/hardware.md,
// Numerics), so that results do not depend on how a host propagates NaN payloads.
inline constexpr uint32_t kCanonicalNan = 0x7fc00000u;

// One MATMUL against the loaded weight tile (K x N): for m < rows, n < N,
// acc row m, element n = (accumulate ? acc : 0) + sum over k ascending of a[m][k] * w[k][n].
// Activation row m is at src_row(m): rows come in groups of row_group (0: one group of all
// rows), rows of a group src_stride apart, groups group_stride apart. Pointers are into the
// on-chip buffers; the executor has range-checked every row.
struct MatmulArgs {
    const uint8_t *src = nullptr; // activation row 0: K elements of int8, bf16 or fp32
    uint64_t src_stride = 0;      // bytes between activation rows of a group
    uint32_t row_group = 0;       // rows per group, 0 = all rows
    uint64_t group_stride = 0;    // bytes between groups
    uint8_t *acc = nullptr;       // accumulator row 0: N int32 or fp32 elements
    uint64_t acc_stride = 0;      // bytes between accumulator rows
    uint32_t rows = 0;            // M
    bool accumulate = false;      // add into the accumulators instead of starting at 0

    const uint8_t *src_row(uint32_t m) const {
        uint32_t group = row_group ? row_group : rows;
        return src + uint64_t(m / group) * group_stride + uint64_t(m % group) * src_stride;
    }
};

} // namespace tpu::engine
