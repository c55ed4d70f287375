// SPDX-License-Identifier: MIT
// conv_weight_grad_direct.cpp - a stride-1 convolution's weight gradient contracted directly:
// dw[ky][kx][c][f] = sum over (oy, ox, n) of xp[c][oy + ky][ox + kx][n] dyt[oy][ox][n][f], with
// xp the zero-padded xt in the unified buffer. Per run of P output pixels of a row (K = P N rows
// of dyt, one LOAD_W) one MATMUL per kernel row adds into its taps' C x F accumulators (KW C rows
// in row groups of C, one tap apart), and the accumulators are dw as it lies in memory. The
// lowering as a convolution of xt by dy (conv_grad_compiler.cpp) walks the C images as one tall
// image and computes the rows between them too (5x the MACs for the demo's second layer); this one
// does only the net's MACs, in the same order for every output: (oy, ox) ascending, n ascending
// within, bf16 blocks of 32 n (so every sum and every rounding is the convolution's, padding's zero
// products included).
#include "conv_weight_grad_direct.hpp"

#include "codegen/isa_limits.hpp"

#include <algorithm>

namespace tpurt::detail {

std::optional<Program> direct_weight_grad(const ConvGradProblem &p, const ConvGradLowering &l,
                                          const ArrayLimits &limits) {
    const Conv2dShape &s = p.shape;
    if (l.spread || p.dilation_h != 1 || p.dilation_w != 1 || p.type == DType::Int8 ||
        s.batch > limits.mxu_rows || s.filters > limits.mxu_cols ||
        (p.type == DType::Bf16 && s.batch % 32 != 0))
        return std::nullopt;
    const std::uint64_t e = element_size(p.type), n = s.batch, c = s.channels, f = s.filters;
    const std::uint64_t ph = s.height + 2ull * s.pad_h, pw = s.width + 2ull * s.pad_w;
    const std::uint64_t oh = l.out_h, ow = l.out_w, taps = std::uint64_t{s.kernel_h} * s.kernel_w;
    const std::uint64_t xp_bytes = c * ph * pw * n * e, dyt_bytes = oh * ow * n * f * e;
    // Output pixels of a row per LOAD_W: as many as the array's rows hold (bf16: whole blocks of
    // 32, as the batch is a multiple of 32).
    const std::uint64_t run = std::min<std::uint64_t>(ow, limits.mxu_rows / n);
    if (xp_bytes + dyt_bytes > limits.ub_bytes || taps * c * f * 4 > limits.acc_bytes ||
        c * ph > max_dim || s.kernel_w * c > max_dim || s.width * n > max_dim ||
        oh * ow * n > max_dim || c * ph * pw * n * e > UINT32_MAX)
        return std::nullopt;
    const auto u32 = [](std::uint64_t v) { return static_cast<std::uint32_t>(v); };
    const std::uint64_t dyt = xp_bytes, image_row = std::uint64_t{s.width} * n * e;
    ProgramBuilder b;
    // xt's rows into the padded image of each channel, then dy [N, OH, OW, F] as dyt
    // [OH, OW, N, F]: image i's pixels F elements wide, N F apart from row i on.
    for (std::uint64_t ch = 0; ch < c; ++ch)
        b.dma_in({.type = p.type,
                  .host_addr = p.xt_addr + ch * s.height * image_row,
                  .host_stride = image_row,
                  .local_addr = u32(((ch * ph + s.pad_h) * pw + s.pad_w) * n * e),
                  .local_stride = u32(pw * n * e),
                  .rows = s.height,
                  .cols = u32(s.width * n)});
    for (std::uint64_t i = 0; i < n; ++i)
        b.dma_in({.type = p.type,
                  .host_addr = p.dy_addr + i * oh * ow * f * e,
                  .host_stride = f * e,
                  .local_addr = u32(dyt + i * f * e),
                  .local_stride = u32(n * f * e),
                  .rows = u32(oh * ow),
                  .cols = u32(f)});
    for (std::uint64_t oy = 0; oy < oh; ++oy)
        for (std::uint64_t ox = 0; ox < ow; ox += run) {
            const std::uint64_t k = std::min(run, ow - ox) * n;
            b.load_weights({.type = p.type,
                            .src_addr = u32(dyt + (oy * ow + ox) * n * f * e),
                            .src_stride = u32(f * e),
                            .rows = u32(k),
                            .cols = u32(f)});
            // A kernel row's taps in one MATMUL: row kx C + ch reads channel ch at tap kx.
            for (std::uint64_t ky = 0; ky < s.kernel_h; ++ky)
                b.matmul({.type = p.type,
                          .src_addr = u32(((oy + ky) * pw + ox) * n * e),
                          .src_stride = u32(ph * pw * n * e),
                          .rows = u32(s.kernel_w * c),
                          .cols = u32(k),
                          .acc_addr = u32(ky * s.kernel_w * c * f * 4),
                          .acc_stride = u32(f * 4),
                          .accumulate = oy != 0 || ox != 0,
                          .row_group = u32(c),
                          .group_stride = u32(n * e)});
        }
    b.dma_out_acc({.type = DType::Fp32,
                   .host_addr = p.dw_addr,
                   .host_stride = f * 4,
                   .local_addr = 0,
                   .local_stride = u32(f * 4),
                   .rows = u32(taps * c),
                   .cols = u32(f)});
    return b.halt().finish();
}

std::uint64_t mxu_busy_cycles(const std::vector<Program> &programs) {
    std::uint64_t cycles = 0, n = 0;
    for (const Program &program : programs)
        for (const tpu_insn &insn : program.insns) {
            if (insn.hdr.opcode == TPU_OP_LOAD_W)
                n = insn.mxu.cols;
            else if (insn.hdr.opcode == TPU_OP_MATMUL)
                cycles += insn.mxu.acc_stride < 4 * n
                              ? std::uint64_t{insn.mxu.rows} * (insn.mxu.cols + n)
                              : insn.mxu.rows + insn.mxu.cols + n - 1;
        }
    return cycles;
}

} // namespace tpurt::detail
