// SPDX-License-Identifier: MIT
// Instruction validation: raw tpu_insn -> typed Insn, or the fault the instruction raises. This
// file: dispatch, the operand-less instructions, DMA, TIMESTAMP and the matrix unit; the vector
// unit's instructions are in decoder_vpu.cpp. Order of checks: opcode, then format (dtype,
// flags, reserved fields, zero or oversized shape, alignment) -> BAD_OPERAND, then on-chip
// ranges -> UB_RANGE / ACC_RANGE.
#include "isa/decoder.hpp"

#include <algorithm>

#include "isa/decode_checks.hpp"
#include "isa/decoder_link.hpp"
#include "isa/decoder_vpu.hpp"

namespace tpu::engine {
namespace {

// NOP, HALT and SYNC have no operands: every byte after the opcode is reserved.
Fault decode_plain(const tpu_insn &raw, Insn *out, Insn plain) {
    if ((raw.raw[0] >> 8) != 0 || raw.raw[1] != 0 || raw.raw[2] != 0 || raw.raw[3] != 0)
        return make_fault(TPU_ERR_BAD_OPERAND);
    *out = plain;
    return kOk;
}

Fault decode_timestamp(const tpu_insn_ts &t, Insn *out) {
    if (t.dtype != 0 || t.flags != 0 || t.reserved[0] != 0 || t.reserved[1] != 0 ||
        !is_aligned(t.host_addr, 8))
        return make_fault(TPU_ERR_BAD_OPERAND);
    *out = TimestampInsn{t.tag, t.host_addr};
    return kOk;
}

Fault decode_dma(const tpu_insn_dma &d, const DecoderLimits &lim, Insn *out) {
    if (!valid_dtype(d.dtype) || d.reserved != 0 || d.rows == 0 || d.cols == 0)
        return make_fault(TPU_ERR_BAD_OPERAND);

    DmaInsn insn;
    insn.to_host = d.opcode == TPU_OP_DMA_OUT;
    uint16_t allowed_flags = insn.to_host ? TPU_F_SRC_ACC : 0;
    if (d.flags & ~allowed_flags)
        return make_fault(TPU_ERR_BAD_OPERAND);
    insn.from_acc = d.flags & TPU_F_SRC_ACC;
    if (insn.from_acc && d.dtype != TPU_DT_INT32 && d.dtype != TPU_DT_FP32)
        return make_fault(TPU_ERR_BAD_OPERAND);

    uint32_t elem = dtype_bytes(d.dtype);
    insn.rows = d.rows;
    insn.row_bytes = uint64_t(d.cols) * elem;
    // The work limit (docs/hardware.md section 6): one DMA moves at most as many bytes as the
    // on-chip memory it reads or writes holds, so rows that overlap (local_stride 0, say) cannot
    // make one instruction run for long.
    const uint64_t local_bytes = insn.from_acc ? lim.acc_bytes : lim.ub_bytes;
    if (!is_aligned(d.local_addr, elem) || !is_aligned(d.local_stride, elem) ||
        insn.bytes() > local_bytes)
        return make_fault(TPU_ERR_BAD_OPERAND);

    insn.host_addr = d.host_addr;
    insn.host_stride = d.host_stride;
    insn.local = Extent2D{d.local_addr, d.local_stride, d.rows, insn.row_bytes};
    Fault f = insn.from_acc ? check_range(insn.local, lim.acc_bytes, TPU_ERR_ACC_RANGE)
                            : check_range(insn.local, lim.ub_bytes, TPU_ERR_UB_RANGE);
    if (!f.ok())
        return f;
    *out = insn;
    return kOk;
}

bool mxu_type(uint8_t dtype, MxuType *type) {
    switch (dtype) {
    case TPU_DT_INT8:
        *type = MxuType::Int8;
        return true;
    case TPU_DT_BF16:
        *type = MxuType::Bf16;
        return true;
    case TPU_DT_FP32:
        *type = MxuType::Fp32;
        return true;
    default:
        return false;
    }
}

// LOAD_W from host memory: the instruction has the tpu_insn_dma layout. Its work is bounded by
// the tile (K x N <= the array, checked by the caller), whatever host_stride is.
Fault decode_load_w_host(const tpu_insn_dma &d, LoadWInsn insn, Insn *out) {
    if (d.local_addr != 0 || d.local_stride != 0 || d.reserved != 0)
        return make_fault(TPU_ERR_BAD_OPERAND);
    insn.from_host = true;
    insn.host_addr = d.host_addr;
    insn.host_stride = d.host_stride;
    *out = insn;
    return kOk;
}

Fault decode_load_w(const tpu_insn &raw, const DecoderLimits &lim, Insn *out) {
    const tpu_insn_mxu &w = raw.mxu;
    LoadWInsn insn;
    if (!mxu_type(w.dtype, &insn.type) || (w.flags & ~(TPU_F_W_HOST | TPU_F_W_TRANSPOSE)))
        return make_fault(TPU_ERR_BAD_OPERAND);
    // rows and cols sit at the same place in both layouts.
    if (w.rows == 0 || w.cols == 0 || w.rows > lim.mxu_rows || w.cols > lim.mxu_cols)
        return make_fault(TPU_ERR_BAD_OPERAND);
    insn.k = w.rows;
    insn.n = w.cols;
    insn.transposed = w.flags & TPU_F_W_TRANSPOSE;
    if (w.flags & TPU_F_W_HOST)
        return decode_load_w_host(raw.dma, insn, out);

    // The accumulator and row-group fields have no meaning for LOAD_W and are reserved.
    if (w.acc_addr != 0 || w.acc_stride != 0 || w.row_group != 0 || w.reserved != 0 ||
        w.group_stride != 0)
        return make_fault(TPU_ERR_BAD_OPERAND);
    uint32_t elem = mxu_elem_bytes(insn.type);
    if (!is_aligned(w.src_addr, elem) || !is_aligned(w.src_stride, elem))
        return make_fault(TPU_ERR_BAD_OPERAND);
    insn.src = Extent2D{w.src_addr, w.src_stride, insn.source_rows(), insn.row_bytes()};
    Fault f = check_range(insn.src, lim.ub_bytes, TPU_ERR_UB_RANGE);
    if (!f.ok())
        return f;
    *out = insn;
    return kOk;
}

// Range check of MATMUL's activations, group by group: the lowest offending offset over all
// groups; *end = one past the highest byte read.
Fault check_activations(const MatmulInsn &insn, uint64_t row_bytes, uint64_t ub_bytes,
                        uint64_t *end) {
    const uint32_t group = insn.row_group ? std::min(insn.row_group, insn.m) : insn.m;
    uint64_t lowest_bad = UINT64_MAX;
    *end = 0;
    for (uint32_t first = 0; first < insn.m; first += group) {
        Extent2D e{insn.src_addr + uint64_t(first / group) * insn.group_stride, insn.src_stride,
                   std::min(group, insn.m - first), row_bytes};
        *end = std::max(*end, e.end());
        uint64_t bad;
        if (!extent_fits(e, ub_bytes, &bad))
            lowest_bad = std::min(lowest_bad, bad);
    }
    return lowest_bad == UINT64_MAX ? kOk : make_fault(TPU_ERR_UB_RANGE, lowest_bad);
}

Fault decode_matmul(const tpu_insn_mxu &w, const DecoderLimits &lim, Insn *out) {
    MatmulInsn insn;
    if (!mxu_type(w.dtype, &insn.type) || (w.flags & ~TPU_F_ACCUMULATE) || w.reserved != 0)
        return make_fault(TPU_ERR_BAD_OPERAND);
    if (w.rows == 0 || w.cols == 0 || (w.row_group == 0 && w.group_stride != 0))
        return make_fault(TPU_ERR_BAD_OPERAND);
    uint32_t elem = mxu_elem_bytes(insn.type);
    if (!is_aligned(w.src_addr, elem) || !is_aligned(w.src_stride, elem) ||
        !is_aligned(w.group_stride, elem) || !is_aligned(w.acc_addr, 4) ||
        !is_aligned(w.acc_stride, 4))
        return make_fault(TPU_ERR_BAD_OPERAND);

    insn.m = w.rows;
    insn.k = w.cols;
    insn.accumulate = w.flags & TPU_F_ACCUMULATE;
    insn.src_addr = w.src_addr;
    insn.src_stride = w.src_stride;
    insn.row_group = w.row_group;
    insn.group_stride = w.group_stride;
    insn.acc_addr = w.acc_addr;
    insn.acc_stride = w.acc_stride;
    Fault f = check_activations(insn, uint64_t(w.cols) * elem, lim.ub_bytes, &insn.src_end);
    if (!f.ok())
        return f;
    *out = insn;
    return kOk;
}

} // namespace

Fault decode(const tpu_insn &raw, const DecoderLimits &limits, Insn *out) {
    switch (raw.hdr.opcode) {
    case TPU_OP_NOP:
        return decode_plain(raw, out, NopInsn{});
    case TPU_OP_HALT:
        return decode_plain(raw, out, HaltInsn{});
    case TPU_OP_SYNC:
        return decode_plain(raw, out, SyncInsn{});
    case TPU_OP_TIMESTAMP:
        return decode_timestamp(raw.ts, out);
    case TPU_OP_DMA_IN:
    case TPU_OP_DMA_OUT:
        return decode_dma(raw.dma, limits, out);
    case TPU_OP_LOAD_W:
        return decode_load_w(raw, limits, out);
    case TPU_OP_MATMUL:
        return decode_matmul(raw.mxu, limits, out);
    case TPU_OP_ACTIVATE:
        return decode_activate(raw.act, limits, out);
    case TPU_OP_VECTOR:
        return decode_vector(raw.vec, limits, out);
    case TPU_OP_REDUCE:
        return decode_reduce(raw.vec, limits, out);
    case TPU_OP_POOL:
        return decode_pool(raw.pool, limits, out);
    case TPU_OP_TRANSPOSE:
        return decode_transpose(raw.vec, limits, out);
    case TPU_OP_SEND:
    case TPU_OP_RECV:
        return decode_link(raw.link, limits, out);
    default:
        return make_fault(TPU_ERR_BAD_OPCODE);
    }
}

} // namespace tpu::engine
