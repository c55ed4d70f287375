// SPDX-License-Identifier: MIT
// matmul_compiler.hpp - compiles C[M x N] = A[M x K] x B[K x N] (row-major, int8 -> int32,
// bf16 -> fp32 or fp32 -> fp32) into card programs. A pure function of the shapes, the operands'
// device addresses and the card's limits, so it runs (and is tested) without a device.
//
// Tiling: N in tiles of tile_n <= mxu_cols columns and K in tiles of tile_k <= mxu_rows. C is
// produced in blocks of block_m rows x group_n column tiles that stay in the accumulators until
// done. For each block, k tiles go in ascending order (the first overwrites the accumulators,
// later ones accumulate, which makes the result bit-identical to the plain k-ascending loop);
// per k tile, each column tile's weights are DMA'd from B and loaded, and A streams through
// them in tile_m-row pieces. When a block's A rows fit the unified buffer at once (tile_m ==
// block_m), they are loaded once per k tile and reused by every column tile of the group; if
// the block's A of all K fits too, the k tiles go side by side (tile k0 at column k0 of rows of
// K elements), so no DMA overwrites a tile a MATMUL may still read and fast mode reads them
// as rows of all K in place.
// The block shape is chosen to minimise the card's modelled cycles (docs/hardware.md: DMA 64
// bytes per cycle, LOAD_W K cycles, MATMUL M + K + N - 1). After the last k tile the block
// goes from the accumulators into C with one DMA. Every block is self-contained, so a matmul
// whose instructions exceed one program is split into several jobs at block boundaries.
//
// With an epilogue (a dense layer), each finished block instead goes through ACTIVATE: the
// unified buffer is free once the block's MATMULs are done, so the block is processed in
// slices of columns (their fp32 bias DMA'd to UB 0) and rows (ACTIVATE into the UB after the
// bias, then DMA_OUT to C) as large as the unified buffer holds.
#pragma once

#include "tpurt/card/vpu_ops.hpp"
#include "tpurt/codegen/program_builder.hpp"
#include "tpurt/device_info.hpp"
#include "tpurt/types/dtype.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace tpurt {

// What happens to C on the card before it is written out: C = function(scale * (A x B + bias)),
// converted to out_type (Int8, Bf16, Int32 or Fp32), as ACTIVATE defines it (docs/hardware.md).
struct MatmulEpilogue {
    Activation function = Activation::None;
    DType out_type = DType::Fp32;
    std::optional<std::uint64_t> bias_addr = std::nullopt; // device VA of fp32[N]
    float scale = 1.0f;
};

struct MatmulProblem {
    DType type = DType::Int8; // input type: Int8 (C is int32), Bf16 or Fp32 (C is fp32)
    std::uint32_t m = 0;
    std::uint32_t k = 0;
    std::uint32_t n = 0;
    std::uint64_t a_addr = 0; // device virtual addresses of A, B and C
    std::uint64_t b_addr = 0;
    std::uint64_t c_addr = 0;
    std::uint64_t a_stride = 0; // bytes between rows; 0 means densely packed
    std::uint64_t b_stride = 0;
    std::uint64_t c_stride = 0;
    // Without an epilogue C holds the accumulators (int32 or fp32); with one, out_type values.
    std::optional<MatmulEpilogue> epilogue = std::nullopt;
};

struct MatmulTiling {
    std::uint32_t tile_k = 0;      // K of a weight tile
    std::uint32_t tile_n = 0;      // N of a weight tile
    std::uint32_t group_n = 0;     // column tiles one accumulator block holds
    std::uint32_t block_m = 0;     // rows of C one accumulator block holds
    std::uint32_t tile_m = 0;      // rows of A per DMA_IN + MATMUL
    std::uint32_t ub_a_offset = 0; // A tiles live here in the unified buffer, weights at 0
    std::uint32_t acc_stride = 0;  // bytes between accumulator rows
};

struct MatmulPlan {
    MatmulTiling tiling;
    std::vector<Program> programs; // one job each, in any order (they write disjoint parts of C)
    std::uint64_t weight_loads = 0;
    std::uint64_t instructions = 0;
};

// Tile sizes for a matmul of the given shape on a card with `limits`, such that one
// accumulator block's work fits a program of `max_program_bytes`, with the fewest modelled
// cycles among those. Throws tpurt::Error
// (Unsupported) when the card's memories are too small for even the smallest tiles.
MatmulTiling choose_matmul_tiling(DType type, std::uint32_t m, std::uint32_t k, std::uint32_t n,
                                  const ArrayLimits &limits,
                                  std::size_t max_program_bytes = TPU_PROGRAM_MAX_BYTES);

// The programs computing `problem` on a card with `limits`, each at most `max_program_bytes`
// long and ending in HALT. Throws tpurt::Error (InvalidArgument) for empty shapes, strides
// shorter than a row, or a bad program size limit.
MatmulPlan compile_matmul(const MatmulProblem &problem, const ArrayLimits &limits,
                          std::size_t max_program_bytes = TPU_PROGRAM_MAX_BYTES);

} // namespace tpurt
