// SPDX-License-Identifier: MIT
// The tiled GEMM program and its DMA-only twin.
#include "gemm_program.hpp"

#include <algorithm>

namespace tpu::bench {
namespace {

using namespace tpu::test;

uint64_t align64(uint64_t v) {
    return (v + 63) & ~uint64_t(63);
}

uint8_t out_dtype(uint8_t dtype) {
    return dtype == TPU_DT_INT8 ? TPU_DT_INT32 : TPU_DT_FP32;
}

// DMA_IN of A and B; where B starts in the unified buffer.
uint32_t push_inputs(const Gemm &g, Program &p) {
    const uint32_t es = elem_bytes(g.dtype);
    const uint32_t a_row = g.k * es;
    const uint32_t b_row = g.n * es;
    const uint32_t b_ub = uint32_t(align64(uint64_t(g.m) * a_row));
    p.push_back(dma_in(g.dtype, uint16_t(g.m), uint16_t(g.k), g.a_va, a_row, 0, a_row));
    p.push_back(dma_in(g.dtype, uint16_t(g.k), uint16_t(g.n), g.b_va, b_row, b_ub, b_row));
    return b_ub;
}

void push_output(const Gemm &g, Program &p) {
    const uint32_t c_row = g.n * 4;
    p.push_back(
        dma_out_acc(out_dtype(g.dtype), uint16_t(g.m), uint16_t(g.n), g.c_va, c_row, 0, c_row));
    p.push_back(halt());
}

} // namespace

uint32_t elem_bytes(uint8_t dtype) {
    switch (dtype) {
    case TPU_DT_INT8:
        return 1;
    case TPU_DT_BF16:
        return 2;
    default:
        return 4;
    }
}

const char *dtype_name(uint8_t dtype) {
    switch (dtype) {
    case TPU_DT_INT8:
        return "int8";
    case TPU_DT_BF16:
        return "bf16";
    default:
        return "fp32";
    }
}

uint64_t ub_bytes(const Gemm &g) {
    const uint32_t es = elem_bytes(g.dtype);
    return align64(uint64_t(g.m) * g.k * es) + uint64_t(g.k) * g.n * es;
}

uint64_t acc_bytes(const Gemm &g) {
    return uint64_t(g.m) * g.n * 4;
}

Program gemm_program(const Gemm &g, uint32_t mxu_rows, uint32_t mxu_cols) {
    const uint32_t es = elem_bytes(g.dtype);
    const uint32_t a_row = g.k * es;
    const uint32_t b_row = g.n * es;
    const uint32_t c_row = g.n * 4;
    Program p;
    const uint32_t b_ub = push_inputs(g, p);
    for (uint32_t n0 = 0; n0 < g.n; n0 += mxu_cols) {
        const uint32_t nn = std::min(mxu_cols, g.n - n0);
        for (uint32_t k0 = 0; k0 < g.k; k0 += mxu_rows) {
            const uint32_t kk = std::min(mxu_rows, g.k - k0);
            p.push_back(
                load_w(g.dtype, uint16_t(kk), uint16_t(nn), b_ub + (k0 * g.n + n0) * es, b_row));
            p.push_back(matmul(g.dtype, uint16_t(g.m), uint16_t(kk), k0 * es, a_row, n0 * 4, c_row,
                               k0 > 0 ? TPU_F_ACCUMULATE : 0));
        }
    }
    push_output(g, p);
    return p;
}

Program dma_only_program(const Gemm &g) {
    Program p;
    push_inputs(g, p);
    push_output(g, p);
    return p;
}

} // namespace tpu::bench
