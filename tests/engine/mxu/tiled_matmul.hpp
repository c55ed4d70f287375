// SPDX-License-Identifier: MIT
// A matmul C (M x N) = A (M x K) x B (K x N) compiled by hand into a card program the way a
// compiler tiles it for the array: A and B into the unified buffer once, then for each N tile
// and each K tile in ascending order a LOAD_W and a MATMUL (ACCUMULATE after the first K tile),
// finally C out of the accumulators.
#pragma once

#include <cstdint>
#include <vector>

#include "tpu_engine.h"
#include "tpu_test/address_space.hpp"
#include "tpu_test/card.hpp"
#include "tpu_test/program.hpp"

namespace tpu::test {

struct TiledMatmul {
    uint8_t dtype = TPU_DT_INT8; // TPU_DT_INT8 or TPU_DT_BF16
    uint32_t m = 1;
    uint32_t k = 1;
    uint32_t n = 1;
    uint64_t a_va = 0x10000000;
    uint64_t b_va = 0x40000000;
    uint64_t c_va = 0x80000000;
};

Program tiled_matmul_program(const TiledMatmul &mm, uint32_t mxu_rows, uint32_t mxu_cols);

struct MatmulRun {
    tpu_job_result result;
    std::vector<uint8_t> c; // M x N int32 or fp32
};

// Maps A and B read-only and C writable in space, fills A and B, runs the program, reads C.
MatmulRun run_tiled_matmul(Card &card, AddressSpace &space, const TiledMatmul &mm, const void *a,
                           const void *b);

} // namespace tpu::test
