// SPDX-License-Identifier: MIT
// Validation of the vector unit's instructions: format first (BAD_OPERAND, including the work
// limit), then the unified buffer operands in field order (UB_RANGE), then the accumulators
// (ACC_RANGE).
#include "isa/decoder_vpu.hpp"

#include <bit>

#include "isa/decode_checks.hpp"

namespace tpu::engine {
namespace {

constexpr uint16_t kOpMask = TPU_VPU_OP_MASK;

Fault bad_operand() {
    return make_fault(TPU_ERR_BAD_OPERAND);
}

// The work limit (docs/hardware.md section 6): an instruction processes at most as many elements
// of its dtype as the unified buffer holds, so operands whose rows overlap (stride 0, say) cannot
// make one instruction run for long.
bool over_work_limit(uint64_t elements, uint32_t elem, const DecoderLimits &lim) {
    return elements * elem > lim.ub_bytes;
}

} // namespace

Fault decode_activate(const tpu_insn_act &a, const DecoderLimits &lim, Insn *out) {
    const uint16_t known = TPU_ACT_FUNC_MASK | TPU_F_ACT_BIAS | TPU_F_ACT_SRC_INT32;
    if (!valid_dtype(a.dtype) || (a.flags & ~known) || (a.flags & TPU_ACT_FUNC_MASK) > TPU_ACT_ERF)
        return bad_operand();
    if (a.rows == 0 || a.cols == 0)
        return bad_operand();
    ActivateInsn insn;
    insn.dtype = a.dtype;
    insn.func = a.flags & TPU_ACT_FUNC_MASK;
    insn.bias = a.flags & TPU_F_ACT_BIAS;
    insn.src_int32 = a.flags & TPU_F_ACT_SRC_INT32;
    const uint32_t elem = dtype_bytes(a.dtype);
    if (!is_aligned(a.acc_addr, 4) || !is_aligned(a.acc_stride, 4) ||
        !is_aligned(a.dst_addr, elem) || !is_aligned(a.dst_stride, elem) ||
        !is_aligned(a.bias_addr, 4) || (!insn.bias && a.bias_addr != 0) ||
        over_work_limit(uint64_t(a.rows) * a.cols, elem, lim))
        return bad_operand();

    insn.rows = a.rows;
    insn.cols = a.cols;
    insn.acc = Extent2D{a.acc_addr, a.acc_stride, a.rows, 4 * uint64_t(a.cols)};
    insn.dst = Extent2D{a.dst_addr, a.dst_stride, a.rows, uint64_t(a.cols) * elem};
    insn.bias_addr = a.bias_addr;
    insn.scale = std::bit_cast<float>(a.scale);
    Fault f = check_ub(lim.ub_bytes, insn.dst);
    if (f.ok() && insn.bias)
        f = check_ub(lim.ub_bytes, Extent2D{a.bias_addr, 0, 1, 4 * uint64_t(a.cols)});
    if (f.ok())
        f = check_range(insn.acc, lim.acc_bytes, TPU_ERR_ACC_RANGE);
    if (!f.ok())
        return f;
    *out = insn;
    return kOk;
}

Fault decode_vector(const tpu_insn_vec &v, const DecoderLimits &lim, Insn *out) {
    if (!valid_dtype(v.dtype) || (v.flags & ~(kOpMask | TPU_F_VEC_B_COL)) ||
        (v.flags & kOpMask) > TPU_VOP_EQ || v.rows == 0 || v.cols == 0)
        return bad_operand();
    const uint32_t elem = dtype_bytes(v.dtype);
    for (uint32_t x : {v.a_addr, v.a_stride, v.b_addr, v.b_stride, v.dst_addr, v.dst_stride})
        if (!is_aligned(x, elem))
            return bad_operand();
    if (over_work_limit(uint64_t(v.rows) * v.cols, elem, lim))
        return bad_operand();
    VectorInsn insn;
    insn.dtype = v.dtype;
    insn.op = uint8_t(v.flags & kOpMask);
    insn.b_col = v.flags & TPU_F_VEC_B_COL;
    insn.rows = v.rows;
    insn.cols = v.cols;
    const uint64_t row_bytes = uint64_t(v.cols) * elem;
    insn.a = Extent2D{v.a_addr, v.a_stride, v.rows, row_bytes};
    insn.b = Extent2D{v.b_addr, v.b_stride, v.rows, insn.b_col ? elem : row_bytes};
    insn.dst = Extent2D{v.dst_addr, v.dst_stride, v.rows, row_bytes};
    Fault f = check_ub(lim.ub_bytes, insn.a, insn.b, insn.dst);
    if (!f.ok())
        return f;
    *out = insn;
    return kOk;
}

Fault decode_reduce(const tpu_insn_vec &v, const DecoderLimits &lim, Insn *out) {
    if (!valid_dtype(v.dtype) || (v.flags & ~kOpMask) || (v.flags & kOpMask) > TPU_ROP_MAX ||
        v.rows == 0 || v.cols == 0 || v.b_addr != 0 || v.b_stride != 0)
        return bad_operand();
    const uint8_t op = uint8_t(v.flags & kOpMask);
    const uint32_t elem = dtype_bytes(v.dtype);
    const uint32_t out_elem = op == TPU_ROP_SUM ? 4 : elem; // SUM: int32 or fp32
    if (!is_aligned(v.a_addr, elem) || !is_aligned(v.a_stride, elem) ||
        !is_aligned(v.dst_addr, out_elem) || !is_aligned(v.dst_stride, out_elem) ||
        over_work_limit(uint64_t(v.rows) * v.cols, elem, lim))
        return bad_operand();
    ReduceInsn insn;
    insn.dtype = v.dtype;
    insn.op = op;
    insn.rows = v.rows;
    insn.cols = v.cols;
    insn.a = Extent2D{v.a_addr, v.a_stride, v.rows, uint64_t(v.cols) * elem};
    insn.dst = Extent2D{v.dst_addr, v.dst_stride, v.rows, out_elem};
    Fault f = check_ub(lim.ub_bytes, insn.a, insn.dst);
    if (!f.ok())
        return f;
    *out = insn;
    return kOk;
}

Fault decode_pool(const tpu_insn_pool &p, const DecoderLimits &lim, Insn *out) {
    if (!valid_dtype(p.dtype) || (p.flags & ~kOpMask) || (p.flags & kOpMask) > TPU_POOL_AVG ||
        p.reserved != 0)
        return bad_operand();
    if (p.rows == 0 || p.cols == 0 || p.channels == 0 || p.win_h == 0 || p.win_w == 0 ||
        p.stride_h == 0 || p.stride_w == 0 || p.win_h > TPU_POOL_MAX_WINDOW ||
        p.win_w > TPU_POOL_MAX_WINDOW)
        return bad_operand();
    const uint32_t elem = dtype_bytes(p.dtype);
    if (!is_aligned(p.src_addr, elem) || !is_aligned(p.src_row_stride, elem) ||
        !is_aligned(p.dst_addr, elem) || !is_aligned(p.dst_row_stride, elem) ||
        over_work_limit(uint64_t(p.rows) * p.cols * p.channels, elem, lim))
        return bad_operand();
    PoolInsn insn;
    insn.dtype = p.dtype;
    insn.average = (p.flags & kOpMask) == TPU_POOL_AVG;
    insn.out_h = p.rows;
    insn.out_w = p.cols;
    insn.channels = p.channels;
    insn.win_h = p.win_h;
    insn.win_w = p.win_w;
    insn.stride_h = p.stride_h;
    insn.stride_w = p.stride_w;
    const uint32_t in_h = (p.rows - 1) * uint32_t(p.stride_h) + p.win_h;
    const uint64_t in_w = (p.cols - 1) * uint64_t(p.stride_w) + p.win_w;
    const uint64_t pixel = uint64_t(p.channels) * elem;
    insn.src = Extent2D{p.src_addr, p.src_row_stride, in_h, in_w * pixel};
    insn.dst = Extent2D{p.dst_addr, p.dst_row_stride, p.rows, p.cols * pixel};
    Fault f = check_ub(lim.ub_bytes, insn.src, insn.dst);
    if (!f.ok())
        return f;
    *out = insn;
    return kOk;
}

Fault decode_transpose(const tpu_insn_vec &v, const DecoderLimits &lim, Insn *out) {
    if (!valid_dtype(v.dtype) || v.flags != 0 || v.rows == 0 || v.cols == 0 || v.b_addr != 0 ||
        v.b_stride != 0)
        return bad_operand();
    const uint32_t elem = dtype_bytes(v.dtype);
    if (!is_aligned(v.a_addr, elem) || !is_aligned(v.a_stride, elem) ||
        !is_aligned(v.dst_addr, elem) || !is_aligned(v.dst_stride, elem) ||
        over_work_limit(uint64_t(v.rows) * v.cols, elem, lim))
        return bad_operand();
    TransposeInsn insn;
    insn.dtype = v.dtype;
    insn.rows = v.rows;
    insn.cols = v.cols;
    insn.a = Extent2D{v.a_addr, v.a_stride, v.rows, uint64_t(v.cols) * elem};
    insn.dst = Extent2D{v.dst_addr, v.dst_stride, v.cols, uint64_t(v.rows) * elem};
    Fault f = check_ub(lim.ub_bytes, insn.a, insn.dst);
    if (!f.ok())
        return f;
    *out = insn;
    return kOk;
}

} // namespace tpu::engine
