// SPDX-License-Identifier: MIT
// Instruction builders for hand-written test programs: each returns one encoded tpu_insn
// (tpu_hw.h) with every unused field zero. A Program is a vector of them, ready to be written
// to device memory as is.
#pragma once

#include <bit>
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

// Weight tile k x n (dtype TPU_DT_INT8, TPU_DT_BF16 or TPU_DT_FP32), row i at
// ub_addr + i * ub_stride; flags TPU_F_W_TRANSPOSE: n rows of k elements instead.
inline tpu_insn load_w(uint8_t dtype, uint16_t k, uint16_t n, uint32_t ub_addr, uint32_t ub_stride,
                       uint16_t flags = 0) {
    return mxu(TPU_OP_LOAD_W, dtype, flags, k, n, ub_addr, ub_stride, 0, 0);
}

// Weight tile k x n from host memory (rows host_stride apart); flags may add TPU_F_W_TRANSPOSE.
inline tpu_insn load_w_host(uint8_t dtype, uint16_t k, uint16_t n, uint64_t host_addr,
                            uint32_t host_stride, uint16_t flags = 0) {
    return dma(TPU_OP_LOAD_W, dtype, uint16_t(TPU_F_W_HOST | flags), k, n, host_addr, host_stride,
               0, 0);
}

// m x k activations at ub_addr (rows ub_stride apart) times the loaded tile into the
// accumulators at acc_addr (rows acc_stride apart); flags 0 or TPU_F_ACCUMULATE.
inline tpu_insn matmul(uint8_t dtype, uint16_t m, uint16_t k, uint32_t ub_addr, uint32_t ub_stride,
                       uint32_t acc_addr, uint32_t acc_stride, uint16_t flags = 0) {
    return mxu(TPU_OP_MATMUL, dtype, flags, m, k, ub_addr, ub_stride, acc_addr, acc_stride);
}

// MATMUL walking rows in groups: row m at ub_addr + (m / group) * group_stride +
// (m % group) * ub_stride (one tap of a convolution: group = output width).
inline tpu_insn matmul_grouped(uint8_t dtype, uint16_t m, uint16_t k, uint32_t ub_addr,
                               uint32_t ub_stride, uint16_t group, uint32_t group_stride,
                               uint32_t acc_addr, uint32_t acc_stride, uint16_t flags = 0) {
    tpu_insn i = matmul(dtype, m, k, ub_addr, ub_stride, acc_addr, acc_stride, flags);
    i.mxu.row_group = group;
    i.mxu.group_stride = group_stride;
    return i;
}

// ACTIVATE rows x cols accumulators -> dtype in the UB; flags = tpu_act_func | TPU_F_ACT_*.
inline tpu_insn activate(uint8_t dtype, uint16_t flags, uint16_t rows, uint16_t cols,
                         uint32_t acc_addr, uint32_t acc_stride, uint32_t dst_addr,
                         uint32_t dst_stride, uint32_t bias_addr = 0, float scale = 1.0f) {
    tpu_insn i{};
    i.act.opcode = TPU_OP_ACTIVATE;
    i.act.dtype = dtype;
    i.act.flags = flags;
    i.act.rows = rows;
    i.act.cols = cols;
    i.act.acc_addr = acc_addr;
    i.act.acc_stride = acc_stride;
    i.act.dst_addr = dst_addr;
    i.act.dst_stride = dst_stride;
    i.act.bias_addr = bias_addr;
    i.act.scale = std::bit_cast<uint32_t>(scale);
    return i;
}

// The struct tpu_insn_vec layout (VECTOR, REDUCE, TRANSPOSE).
inline tpu_insn vec(uint8_t opcode, uint8_t dtype, uint16_t flags, uint16_t rows, uint16_t cols,
                    uint32_t a_addr, uint32_t a_stride, uint32_t b_addr, uint32_t b_stride,
                    uint32_t dst_addr, uint32_t dst_stride) {
    tpu_insn i{};
    i.vec.opcode = opcode;
    i.vec.dtype = dtype;
    i.vec.flags = flags;
    i.vec.rows = rows;
    i.vec.cols = cols;
    i.vec.a_addr = a_addr;
    i.vec.a_stride = a_stride;
    i.vec.b_addr = b_addr;
    i.vec.b_stride = b_stride;
    i.vec.dst_addr = dst_addr;
    i.vec.dst_stride = dst_stride;
    return i;
}

inline tpu_insn vector(uint8_t dtype, uint16_t op, uint16_t rows, uint16_t cols, uint32_t a_addr,
                       uint32_t a_stride, uint32_t b_addr, uint32_t b_stride, uint32_t dst_addr,
                       uint32_t dst_stride) {
    return vec(TPU_OP_VECTOR, dtype, op, rows, cols, a_addr, a_stride, b_addr, b_stride, dst_addr,
               dst_stride);
}

inline tpu_insn reduce(uint8_t dtype, uint16_t op, uint16_t rows, uint16_t cols, uint32_t a_addr,
                       uint32_t a_stride, uint32_t dst_addr, uint32_t dst_stride) {
    return vec(TPU_OP_REDUCE, dtype, op, rows, cols, a_addr, a_stride, 0, 0, dst_addr, dst_stride);
}

inline tpu_insn transpose(uint8_t dtype, uint16_t rows, uint16_t cols, uint32_t a_addr,
                          uint32_t a_stride, uint32_t dst_addr, uint32_t dst_stride) {
    return vec(TPU_OP_TRANSPOSE, dtype, 0, rows, cols, a_addr, a_stride, 0, 0, dst_addr,
               dst_stride);
}

struct PoolShape {
    uint16_t out_h = 1, out_w = 1, channels = 1;
    uint8_t win_h = 1, win_w = 1, stride_h = 1, stride_w = 1;
};

inline tpu_insn pool(uint8_t dtype, uint16_t op, const PoolShape &s, uint32_t src_addr,
                     uint32_t src_row_stride, uint32_t dst_addr, uint32_t dst_row_stride) {
    tpu_insn i{};
    i.pool.opcode = TPU_OP_POOL;
    i.pool.dtype = dtype;
    i.pool.flags = op;
    i.pool.rows = s.out_h;
    i.pool.cols = s.out_w;
    i.pool.channels = s.channels;
    i.pool.win_h = s.win_h;
    i.pool.win_w = s.win_w;
    i.pool.stride_h = s.stride_h;
    i.pool.stride_w = s.stride_w;
    i.pool.src_addr = src_addr;
    i.pool.src_row_stride = src_row_stride;
    i.pool.dst_addr = dst_addr;
    i.pool.dst_row_stride = dst_row_stride;
    return i;
}

inline tpu_insn sync_insn() { // SYNC (sync() is taken by unistd.h)
    tpu_insn i{};
    i.hdr.opcode = TPU_OP_SYNC;
    return i;
}

inline tpu_insn timestamp(uint32_t tag, uint64_t host_addr) {
    tpu_insn i{};
    i.ts.opcode = TPU_OP_TIMESTAMP;
    i.ts.tag = tag;
    i.ts.host_addr = host_addr;
    return i;
}

// SEND (spec 2.0): len bytes from the UB at addr (flags TPU_F_LINK_HOST: host VA addr) on port.
inline tpu_insn send(uint8_t port, uint32_t tag, uint64_t addr, uint32_t len, uint16_t flags = 0) {
    tpu_insn i{};
    i.link.opcode = TPU_OP_SEND;
    i.link.flags = flags;
    i.link.port = port;
    i.link.tag = tag;
    i.link.len = len;
    i.link.addr = addr;
    return i;
}

// RECV (spec 2.0): the next message on port (tag, len) stored at addr, or with reduce (a
// tpu_link_reduce) combined with the dtype elements there; flags may add TPU_F_LINK_HOST.
inline tpu_insn recv(uint8_t port, uint32_t tag, uint64_t addr, uint32_t len,
                     uint8_t reduce = TPU_LINK_COPY, uint8_t dtype = 0, uint16_t flags = 0) {
    tpu_insn i{};
    i.link.opcode = TPU_OP_RECV;
    i.link.dtype = dtype;
    i.link.flags = uint16_t(flags | reduce);
    i.link.port = port;
    i.link.tag = tag;
    i.link.len = len;
    i.link.addr = addr;
    return i;
}

} // namespace tpu::test
