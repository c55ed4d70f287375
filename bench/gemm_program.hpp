// SPDX-License-Identifier: MIT
// Card programs for one square-or-not GEMM C = A x B, tiled for the array in the order the
// engine's fast mode fuses into K chains (the runtime's compiler orders tiles for the card's
// modelled cycles instead): A and B into the unified buffer, then per N tile and K tile
// (ascending) a LOAD_W and a MATMUL over all M rows (ACCUMULATE after the first K tile), then C
// out of the accumulators. The DMA-only twin moves the same bytes without the matrix unit, so
// the time of the MXU part is the difference of the two.
#pragma once

#include <cstdint>

#include "tpu_test/program.hpp"

namespace tpu::bench {

struct Gemm {
    uint8_t dtype; // TPU_DT_INT8, TPU_DT_BF16 or TPU_DT_FP32
    uint32_t m, k, n;
    uint64_t a_va, b_va, c_va;
};

uint32_t elem_bytes(uint8_t dtype);
const char *dtype_name(uint8_t dtype);

// Unified buffer and accumulator bytes the programs need.
uint64_t ub_bytes(const Gemm &g);
uint64_t acc_bytes(const Gemm &g);

tpu::test::Program gemm_program(const Gemm &g, uint32_t mxu_rows, uint32_t mxu_cols);
tpu::test::Program dma_only_program(const Gemm &g);

} // namespace tpu::bench
