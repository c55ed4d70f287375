// SPDX-License-Identifier: MIT
// insn_builders.hpp - instruction encoders for the guest fault and raw-device tests: each returns
// one tpu_insn (tpu_hw.h) with every unused field zero, plus the "long job" programs the reset,
// queue-reset and priority tests keep the card busy with.
#pragma once

#include <tpu_hw.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace guest {

inline union tpu_insn zero_insn() {
    union tpu_insn insn;
    std::memset(&insn, 0, sizeof(insn));
    return insn;
}

inline union tpu_insn op_insn(std::uint8_t opcode) {
    union tpu_insn insn = zero_insn();
    insn.hdr.opcode = opcode;
    return insn;
}

// DMA_IN / DMA_OUT of rows x cols int8 elements, rows packed at both ends.
inline union tpu_insn dma_insn(std::uint8_t opcode, std::uint64_t host_addr, std::uint32_t ub_addr,
                               std::uint16_t rows, std::uint16_t cols) {
    union tpu_insn insn = zero_insn();
    insn.dma.opcode = opcode;
    insn.dma.dtype = TPU_DT_INT8;
    insn.dma.rows = rows;
    insn.dma.cols = cols;
    insn.dma.host_addr = host_addr;
    insn.dma.host_stride = cols;
    insn.dma.local_addr = ub_addr;
    insn.dma.local_stride = cols;
    return insn;
}

// LOAD_W of a K x N tile of dtype from the unified buffer at 0, rows packed.
inline union tpu_insn load_w_insn(std::uint8_t dtype, std::uint16_t k, std::uint16_t n,
                                  std::uint32_t elem_bytes) {
    union tpu_insn insn = zero_insn();
    insn.mxu.opcode = TPU_OP_LOAD_W;
    insn.mxu.dtype = dtype;
    insn.mxu.rows = k;
    insn.mxu.cols = n;
    insn.mxu.src_stride = n * elem_bytes;
    return insn;
}

// MATMUL of M x K activations of dtype at UB 0 into the accumulators at 0 (N columns).
inline union tpu_insn matmul_insn(std::uint8_t dtype, std::uint16_t m, std::uint16_t k,
                                  std::uint16_t n, std::uint32_t elem_bytes) {
    union tpu_insn insn = zero_insn();
    insn.mxu.opcode = TPU_OP_MATMUL;
    insn.mxu.dtype = dtype;
    insn.mxu.rows = m;
    insn.mxu.cols = k;
    insn.mxu.src_stride = k * elem_bytes;
    insn.mxu.acc_stride = 4u * n;
    return insn;
}

// TIMESTAMP to a device VA.
inline union tpu_insn timestamp_insn(std::uint64_t host_addr, std::uint32_t tag) {
    union tpu_insn insn = zero_insn();
    insn.ts.opcode = TPU_OP_TIMESTAMP;
    insn.ts.tag = tag;
    insn.ts.host_addr = host_addr;
    return insn;
}

// A program that keeps the card busy without touching host memory: `matmuls` int8 MATMULs of
// 8192 x 128 x 128 (2^27 MACs each) on the zeroed unified buffer, then HALT.
inline std::vector<union tpu_insn> busy_program(unsigned matmuls) {
    std::vector<union tpu_insn> p{load_w_insn(TPU_DT_INT8, 128, 128, 1)};
    for (unsigned i = 0; i < matmuls; i++)
        p.push_back(matmul_insn(TPU_DT_INT8, 8192, 128, 128, 1));
    p.push_back(op_insn(TPU_OP_HALT));
    return p;
}

} // namespace guest
