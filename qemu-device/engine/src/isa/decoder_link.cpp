// SPDX-License-Identifier: MIT
// SEND / RECV validation: format (port, flags, reduce op, dtype, length, alignment, reserved
// fields) -> BAD_OPERAND, then a unified-buffer operand's range -> UB_RANGE. Whether the port
// has a link is the executor's check (LINK_DOWN), since it changes at run time.
#include "isa/decoder_link.hpp"

#include "isa/decode_checks.hpp"

namespace tpu::engine {

Fault decode_link(const tpu_insn_link &l, const DecoderLimits &lim, Insn *out) {
    const bool recv = l.opcode == TPU_OP_RECV;
    const uint16_t reduce = recv ? (l.flags & TPU_LINK_REDUCE_MASK) : 0;
    const uint16_t allowed =
        TPU_F_LINK_HOST | (recv ? TPU_LINK_REDUCE_MASK | TPU_F_LINK_SKIP_STALE : 0);
    if ((l.flags & ~allowed) || reduce > TPU_LINK_MIN || l.reserved0 || l.reserved1 ||
        l.reserved2 || l.port >= TPU_ICI_MAX_PORTS || l.len == 0 || l.len > TPU_ICI_MAX_BYTES)
        return make_fault(TPU_ERR_BAD_OPERAND);
    // Elements: bytes for a copy, the dtype's for a reduction (int8 has none).
    uint32_t elem = 1;
    if (reduce == TPU_LINK_COPY) {
        if (l.dtype != 0)
            return make_fault(TPU_ERR_BAD_OPERAND);
    } else {
        if (l.dtype != TPU_DT_BF16 && l.dtype != TPU_DT_INT32 && l.dtype != TPU_DT_FP32)
            return make_fault(TPU_ERR_BAD_OPERAND);
        elem = dtype_bytes(l.dtype);
    }
    if (!is_aligned(l.len, elem) || !is_aligned(l.addr, elem))
        return make_fault(TPU_ERR_BAD_OPERAND);

    const bool host = l.flags & TPU_F_LINK_HOST;
    if (!host && (l.addr >= lim.ub_bytes || l.len > lim.ub_bytes - l.addr))
        return make_fault(TPU_ERR_UB_RANGE, l.addr >= lim.ub_bytes ? l.addr : lim.ub_bytes);

    if (recv)
        *out = RecvInsn{l.port, l.tag,           l.len,   host,
                        l.addr, uint8_t(reduce), l.dtype, bool(l.flags & TPU_F_LINK_SKIP_STALE)};
    else
        *out = SendInsn{l.port, l.tag, l.len, host, l.addr};
    return kOk;
}

} // namespace tpu::engine
