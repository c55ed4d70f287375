// SPDX-License-Identifier: MIT
// Instruction validation: raw tpu_insn -> typed Insn, or the fault the instruction raises.
// Order of checks: opcode, then format (dtype, flags, reserved fields, zero or oversized shape,
// alignment) -> BAD_OPERAND, then on-chip ranges -> UB_RANGE / ACC_RANGE.
#include "decoder.hpp"

namespace tpu::engine {
namespace {

uint32_t dtype_bytes(uint8_t dtype) {
    switch (dtype) {
    case TPU_DT_INT8:
        return 1;
    case TPU_DT_BF16:
        return 2;
    default:
        return 4; // TPU_DT_INT32, TPU_DT_FP32
    }
}

bool is_aligned(uint64_t value, uint64_t align) {
    return value % align == 0;
}

Fault check_range(const Extent2D &e, uint64_t size, uint32_t status) {
    uint64_t bad;
    if (!extent_fits(e, size, &bad))
        return make_fault(status, bad);
    return kOk;
}

// NOP and HALT have no operands: every byte after the opcode is reserved.
Fault decode_plain(const tpu_insn &raw, Insn *out, Insn plain) {
    if ((raw.raw[0] >> 8) != 0 || raw.raw[1] != 0 || raw.raw[2] != 0 || raw.raw[3] != 0)
        return make_fault(TPU_ERR_BAD_OPERAND);
    *out = plain;
    return kOk;
}

Fault decode_dma(const tpu_insn_dma &d, const DecoderLimits &lim, Insn *out) {
    if (d.dtype > TPU_DT_FP32 || d.reserved != 0 || d.rows == 0 || d.cols == 0)
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
    if (!is_aligned(d.local_addr, elem) || !is_aligned(d.local_stride, elem))
        return make_fault(TPU_ERR_BAD_OPERAND);

    insn.rows = d.rows;
    insn.row_bytes = uint64_t(d.cols) * elem;
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
    if (dtype == TPU_DT_INT8)
        *type = MxuType::Int8;
    else if (dtype == TPU_DT_BF16)
        *type = MxuType::Bf16;
    else
        return false;
    return true;
}

Fault decode_load_w(const tpu_insn_mxu &w, const DecoderLimits &lim, Insn *out) {
    LoadWInsn insn;
    // acc_addr and acc_stride have no meaning for LOAD_W and are reserved.
    if (!mxu_type(w.dtype, &insn.type) || w.flags != 0 || w.acc_addr != 0 || w.acc_stride != 0 ||
        w.reserved[0] != 0 || w.reserved[1] != 0)
        return make_fault(TPU_ERR_BAD_OPERAND);
    if (w.rows == 0 || w.cols == 0 || w.rows > lim.mxu_rows || w.cols > lim.mxu_cols)
        return make_fault(TPU_ERR_BAD_OPERAND);
    uint32_t elem = mxu_elem_bytes(insn.type);
    if (!is_aligned(w.src_addr, elem) || !is_aligned(w.src_stride, elem))
        return make_fault(TPU_ERR_BAD_OPERAND);

    insn.k = w.rows;
    insn.n = w.cols;
    insn.src = Extent2D{w.src_addr, w.src_stride, w.rows, uint64_t(w.cols) * elem};
    Fault f = check_range(insn.src, lim.ub_bytes, TPU_ERR_UB_RANGE);
    if (!f.ok())
        return f;
    *out = insn;
    return kOk;
}

Fault decode_matmul(const tpu_insn_mxu &w, const DecoderLimits &lim, Insn *out) {
    MatmulInsn insn;
    if (!mxu_type(w.dtype, &insn.type) || (w.flags & ~TPU_F_ACCUMULATE) || w.reserved[0] != 0 ||
        w.reserved[1] != 0)
        return make_fault(TPU_ERR_BAD_OPERAND);
    if (w.rows == 0 || w.cols == 0)
        return make_fault(TPU_ERR_BAD_OPERAND);
    uint32_t elem = mxu_elem_bytes(insn.type);
    if (!is_aligned(w.src_addr, elem) || !is_aligned(w.src_stride, elem) ||
        !is_aligned(w.acc_addr, 4) || !is_aligned(w.acc_stride, 4))
        return make_fault(TPU_ERR_BAD_OPERAND);

    insn.m = w.rows;
    insn.k = w.cols;
    insn.accumulate = w.flags & TPU_F_ACCUMULATE;
    insn.src = Extent2D{w.src_addr, w.src_stride, w.rows, uint64_t(w.cols) * elem};
    insn.acc_addr = w.acc_addr;
    insn.acc_stride = w.acc_stride;
    Fault f = check_range(insn.src, lim.ub_bytes, TPU_ERR_UB_RANGE);
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
    case TPU_OP_DMA_IN:
    case TPU_OP_DMA_OUT:
        return decode_dma(raw.dma, limits, out);
    case TPU_OP_LOAD_W:
        return decode_load_w(raw.mxu, limits, out);
    case TPU_OP_MATMUL:
        return decode_matmul(raw.mxu, limits, out);
    default:
        return make_fault(TPU_ERR_BAD_OPCODE);
    }
}

} // namespace tpu::engine
