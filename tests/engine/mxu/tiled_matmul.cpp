// SPDX-License-Identifier: MIT
// Hand-tiled matmul programs for the engine tests.
#include "tiled_matmul.hpp"

#include <algorithm>

namespace tpu::test {
namespace {

uint32_t elem_bytes(uint8_t dtype) {
    return dtype == TPU_DT_INT8 ? 1 : 2;
}

uint32_t align64(uint64_t v) {
    return uint32_t((v + 63) & ~uint64_t(63));
}

} // namespace

Program tiled_matmul_program(const TiledMatmul &mm, uint32_t mxu_rows, uint32_t mxu_cols) {
    const uint32_t es = elem_bytes(mm.dtype);
    const uint8_t out_dtype = mm.dtype == TPU_DT_INT8 ? TPU_DT_INT32 : TPU_DT_FP32;
    const uint32_t a_ub = 0;
    const uint32_t b_ub = align64(uint64_t(mm.m) * mm.k * es);
    const uint32_t a_row = mm.k * es;
    const uint32_t b_row = mm.n * es;
    const uint32_t c_row = mm.n * 4;

    Program p;
    p.push_back(dma_in(mm.dtype, uint16_t(mm.m), uint16_t(mm.k), mm.a_va, a_row, a_ub, a_row));
    p.push_back(dma_in(mm.dtype, uint16_t(mm.k), uint16_t(mm.n), mm.b_va, b_row, b_ub, b_row));
    for (uint32_t n0 = 0; n0 < mm.n; n0 += mxu_cols) {
        uint32_t nn = std::min(mxu_cols, mm.n - n0);
        for (uint32_t k0 = 0; k0 < mm.k; k0 += mxu_rows) {
            uint32_t kk = std::min(mxu_rows, mm.k - k0);
            p.push_back(
                load_w(mm.dtype, uint16_t(kk), uint16_t(nn), b_ub + (k0 * mm.n + n0) * es, b_row));
            p.push_back(matmul(mm.dtype, uint16_t(mm.m), uint16_t(kk), a_ub + k0 * es, a_row,
                               n0 * 4, c_row, k0 > 0 ? TPU_F_ACCUMULATE : 0));
        }
    }
    p.push_back(dma_out_acc(out_dtype, uint16_t(mm.m), uint16_t(mm.n), mm.c_va, c_row, 0, c_row));
    p.push_back(halt());
    return p;
}

MatmulRun run_tiled_matmul(Card &card, AddressSpace &space, const TiledMatmul &mm, const void *a,
                           const void *b) {
    const uint32_t es = elem_bytes(mm.dtype);
    const uint64_t a_bytes = uint64_t(mm.m) * mm.k * es;
    const uint64_t b_bytes = uint64_t(mm.k) * mm.n * es;
    const uint64_t c_bytes = uint64_t(mm.m) * mm.n * 4;
    space.map(mm.a_va, a_bytes, kRead);
    space.map(mm.b_va, b_bytes, kRead);
    space.map(mm.c_va, c_bytes, kWrite);
    space.write(mm.a_va, a, a_bytes);
    space.write(mm.b_va, b, b_bytes);

    const tpu_engine_config &cfg = card.config();
    MatmulRun run;
    run.result = card.run(space, tiled_matmul_program(mm, cfg.mxu_rows, cfg.mxu_cols));
    run.c.resize(c_bytes);
    space.read(mm.c_va, run.c.data(), c_bytes);
    return run;
}

} // namespace tpu::test
