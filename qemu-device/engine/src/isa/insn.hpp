// SPDX-License-Identifier: MIT
// Decoded instructions: what the decoder hands the executor once an instruction's format and
// on-chip ranges have been checked (decoder.hpp). Offsets are into the unified buffer (UB) or
// the accumulators (ACC); every Extent2D here lies inside its buffer.
#pragma once

#include <cstdint>
#include <variant>

#include "memory/extent.hpp"
#include "mxu/mxu_types.hpp"

namespace tpu::engine {

struct NopInsn {};
struct HaltInsn {};
struct SyncInsn {};

// DMA_IN (host -> UB) or DMA_OUT (UB or ACC -> host).
struct DmaInsn {
    bool to_host = false;  // DMA_OUT
    bool from_acc = false; // DMA_OUT with TPU_F_SRC_ACC
    uint32_t rows = 0;
    uint64_t row_bytes = 0;
    uint64_t host_addr = 0;
    uint64_t host_stride = 0;
    Extent2D local; // in the UB, or the ACC when from_acc

    uint64_t bytes() const { return rows * row_bytes; }
};

// LOAD_W of a K x N tile from the UB or host memory; the source holds source_rows rows of
// row_bytes: K rows of N elements, or N rows of K elements when transposed.
struct LoadWInsn {
    MxuType type = MxuType::Int8;
    uint32_t k = 0;
    uint32_t n = 0;
    bool transposed = false;
    bool from_host = false;
    Extent2D src;             // in the UB (not from_host)
    uint64_t host_addr = 0;   // from_host
    uint64_t host_stride = 0; // from_host

    uint32_t source_rows() const { return transposed ? n : k; }
    uint64_t row_bytes() const { return uint64_t(transposed ? k : n) * mxu_elem_bytes(type); }
    uint64_t bytes() const { return source_rows() * row_bytes(); }
};

struct MatmulInsn {
    MxuType type = MxuType::Int8;
    uint32_t m = 0;
    uint32_t k = 0;
    bool accumulate = false;
    uint64_t src_addr = 0;
    uint64_t src_stride = 0;
    uint32_t row_group = 0; // rows per group; 0 = one group
    uint64_t group_stride = 0;
    uint64_t src_end = 0;  // one past the last UB byte read
    uint64_t acc_addr = 0; // aligned; range depends on the loaded N (executor)
    uint64_t acc_stride = 0;
};

struct ActivateInsn {
    uint8_t dtype = 0; // output type
    uint8_t func = 0;  // tpu_act_func
    bool bias = false;
    bool src_int32 = false;
    uint32_t rows = 0;
    uint32_t cols = 0;
    Extent2D acc;
    Extent2D dst;
    uint64_t bias_addr = 0; // UB, cols fp32 values when bias
    float scale = 1.0f;
};

// VECTOR: dst = a op b elementwise. b's stride may be 0 (broadcast of its first row).
struct VectorInsn {
    uint8_t dtype = 0;
    uint8_t op = 0;     // tpu_vector_op
    bool b_col = false; // TPU_F_VEC_B_COL: b[r][c] = b[r][0]
    uint32_t rows = 0;
    uint32_t cols = 0;
    Extent2D a, b, dst;
};

// REDUCE: dst[r] = op over the row a[r]; dst rows hold one element (int32 / fp32 for SUM).
struct ReduceInsn {
    uint8_t dtype = 0;
    uint8_t op = 0; // tpu_reduce_op
    uint32_t rows = 0;
    uint32_t cols = 0;
    Extent2D a, dst;
};

struct PoolInsn {
    uint8_t dtype = 0;
    bool average = false;
    uint32_t out_h = 0, out_w = 0, channels = 0;
    uint32_t win_h = 0, win_w = 0, stride_h = 0, stride_w = 0;
    Extent2D src, dst;
};

struct TransposeInsn {
    uint8_t dtype = 0;
    uint32_t rows = 0;
    uint32_t cols = 0;
    Extent2D a, dst;
};

struct TimestampInsn {
    uint32_t tag = 0;
    uint64_t host_addr = 0;
};

// SEND (spec 2.0): len bytes from the UB at addr (inside it), or host memory at device VA addr.
struct SendInsn {
    uint32_t port = 0; // < TPU_ICI_MAX_PORTS
    uint32_t tag = 0;
    uint32_t len = 0;
    bool host = false;
    uint64_t addr = 0;
};

// RECV (spec 2.0): the next message on port, of tag and len, stored at or reduced into addr.
struct RecvInsn {
    uint32_t port = 0;
    uint32_t tag = 0;
    uint32_t len = 0;
    bool host = false;
    uint64_t addr = 0;
    uint8_t reduce = 0;      // tpu_link_reduce
    uint8_t dtype = 0;       // of the elements reduced (BF16, INT32, FP32); 0 for COPY
    bool skip_stale = false; // TPU_F_LINK_SKIP_STALE: drop messages of other tags first
};

using Insn = std::variant<NopInsn, HaltInsn, SyncInsn, DmaInsn, LoadWInsn, MatmulInsn, ActivateInsn,
                          VectorInsn, ReduceInsn, PoolInsn, TransposeInsn, TimestampInsn, SendInsn,
                          RecvInsn>;

} // namespace tpu::engine
