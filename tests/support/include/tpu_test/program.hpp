// SPDX-License-Identifier: MIT
// Instruction builders for hand-written test programs: each returns one encoded tpu_insn
// (tpu_hw.h) with every unused field zero. A Program is a vector of them, ready to be written
// to device memory as is.
#pragma once

#include <cstdint>
#include <vector>

#include "tpu_hw.h"

namespace tpu::test {

using Program = std::vector<tpu_insn>;

inline tpu_insn nop() {
    return tpu_insn{};
}

inline tpu_insn halt() {
    tpu_insn i{};
    i.hdr.opcode = TPU_OP_HALT;
    return i;
}

inline tpu_insn dma(uint8_t opcode, uint8_t dtype, uint16_t flags, uint16_t rows, uint16_t cols,
                    uint64_t host_addr, uint32_t host_stride, uint32_t local_addr,
                    uint32_t local_stride) {
    tpu_insn i{};
    i.dma.opcode = opcode;
    i.dma.dtype = dtype;
    i.dma.flags = flags;
    i.dma.rows = rows;
    i.dma.cols = cols;
    i.dma.host_addr = host_addr;
    i.dma.host_stride = host_stride;
    i.dma.local_addr = local_addr;
    i.dma.local_stride = local_stride;
    return i;
}

// host -> unified buffer
inline tpu_insn dma_in(uint8_t dtype, uint16_t rows, uint16_t cols, uint64_t host_addr,
                       uint32_t host_stride, uint32_t ub_addr, uint32_t ub_stride) {
    return dma(TPU_OP_DMA_IN, dtype, 0, rows, cols, host_addr, host_stride, ub_addr, ub_stride);
}

// unified buffer -> host
inline tpu_insn dma_out(uint8_t dtype, uint16_t rows, uint16_t cols, uint64_t host_addr,
                        uint32_t host_stride, uint32_t ub_addr, uint32_t ub_stride) {
    return dma(TPU_OP_DMA_OUT, dtype, 0, rows, cols, host_addr, host_stride, ub_addr, ub_stride);
}

// accumulators -> host (dtype TPU_DT_INT32 or TPU_DT_FP32)
inline tpu_insn dma_out_acc(uint8_t dtype, uint16_t rows, uint16_t cols, uint64_t host_addr,
                            uint32_t host_stride, uint32_t acc_addr, uint32_t acc_stride) {
    return dma(TPU_OP_DMA_OUT, dtype, TPU_F_SRC_ACC, rows, cols, host_addr, host_stride, acc_addr,
               acc_stride);
}

inline tpu_insn mxu(uint8_t opcode, uint8_t dtype, uint16_t flags, uint16_t rows, uint16_t cols,
                    uint32_t src_addr, uint32_t src_stride, uint32_t acc_addr,
                    uint32_t acc_stride) {
    tpu_insn i{};
    i.mxu.opcode = opcode;
    i.mxu.dtype = dtype;
    i.mxu.flags = flags;
    i.mxu.rows = rows;
    i.mxu.cols = cols;
    i.mxu.src_addr = src_addr;
    i.mxu.src_stride = src_stride;
    i.mxu.acc_addr = acc_addr;
    i.mxu.acc_stride = acc_stride;
    return i;
}

// Weight tile k x n (dtype TPU_DT_INT8 or TPU_DT_BF16), row i at ub_addr + i * ub_stride.
inline tpu_insn load_w(uint8_t dtype, uint16_t k, uint16_t n, uint32_t ub_addr,
                       uint32_t ub_stride) {
    return mxu(TPU_OP_LOAD_W, dtype, 0, k, n, ub_addr, ub_stride, 0, 0);
}

// m x k activations at ub_addr (rows ub_stride apart) times the loaded tile into the
// accumulators at acc_addr (rows acc_stride apart); flags 0 or TPU_F_ACCUMULATE.
inline tpu_insn matmul(uint8_t dtype, uint16_t m, uint16_t k, uint32_t ub_addr, uint32_t ub_stride,
                       uint32_t acc_addr, uint32_t acc_stride, uint16_t flags = 0) {
    return mxu(TPU_OP_MATMUL, dtype, flags, m, k, ub_addr, ub_stride, acc_addr, acc_stride);
}

} // namespace tpu::test
