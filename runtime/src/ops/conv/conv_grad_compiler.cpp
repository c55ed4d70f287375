// SPDX-License-Identifier: MIT
// conv_grad_compiler.cpp - the gradients of a convolution as card programs (see
// conv_grad_compiler.hpp): block copies spreading dy, TRANSPOSEs of the weight taps into the
// flipped kernel, permutes of x and dy, conv2d's programs, block copies of the weight taps; the
// weight gradient contracted directly where conv_weight_grad_direct.hpp applies.
#include "tpurt/codegen/conv_grad_compiler.hpp"

#include "conv_weight_grad_direct.hpp"

#include "codegen/block_copy.hpp"
#include "codegen/program_splitter.hpp"
#include "tpurt/codegen/axis_compiler.hpp"
#include "tpurt/codegen/vector_compiler.hpp"
#include "tpurt/error.hpp"

#include <optional>
#include <string>

namespace tpurt {

namespace {

[[noreturn]] void invalid(const std::string &what) {
    throw Error(ErrorCode::InvalidArgument, "conv2d gradient: " + what);
}

void append(std::vector<Program> &programs, std::vector<Program> more) {
    for (Program &p : more)
        programs.push_back(std::move(p));
}

// Programs that need nothing a job starts with (they write every on-chip byte they read), as few
// jobs as fit: each part's instructions without its HALT, a SYNC between parts (a part may read
// host memory the one before wrote).
std::vector<Program> joined(const std::vector<Program> &parts) {
    ProgramSplitter out(TPU_PROGRAM_MAX_BYTES);
    for (std::size_t i = 0; i < parts.size(); ++i) {
        ProgramBuilder part;
        if (i > 0)
            part.sync();
        Program body = parts[i];
        body.insns.pop_back(); // HALT
        part.append(body);
        out.add(part.finish());
    }
    return out.finish();
}

// dy [N, OH, OW, F] into the zeroed dys [N, HS, WS, F] at rows stride_h, pixels stride_w apart.
std::vector<Program> spread_dy(const ConvGradProblem &p, const ConvGradLowering &l,
                               const ArrayLimits &limits) {
    const Conv2dShape &s = p.shape;
    const std::uint64_t e = element_size(p.type), pixel = std::uint64_t{s.filters} * e;
    const Conv2dShape &to = l.input_grad; // dys is its input
    std::vector<detail::BlockCopy> blocks;
    for (std::uint64_t n = 0; n < s.batch; ++n)
        for (std::uint64_t oy = 0; oy < l.out_h; ++oy)
            blocks.push_back(
                {.src = p.dy_addr + (n * l.out_h + oy) * l.out_w * pixel,
                 .src_stride = pixel,
                 .dst = p.dys_addr + (n * to.height + oy * s.stride_h) * to.width * pixel,
                 .dst_stride = s.stride_w * pixel,
                 .rows = l.out_w,
                 .cols = s.filters});
    return detail::compile_block_copies(p.type, blocks, limits);
}

} // namespace

ConvGradLowering lower_conv_grad(const ConvGradProblem &p) {
    const Conv2dShape &s = p.shape;
    if (s.batch == 0 || s.height == 0 || s.width == 0 || s.channels == 0 || s.filters == 0 ||
        s.kernel_h == 0 || s.kernel_w == 0 || s.stride_h == 0 || s.stride_w == 0 ||
        p.dilation_h == 0 || p.dilation_w == 0)
        invalid("empty shapes, strides or dilations of 0");
    const std::uint64_t kh = (std::uint64_t{s.kernel_h} - 1) * p.dilation_h + 1,
                        kw = (std::uint64_t{s.kernel_w} - 1) * p.dilation_w + 1;
    const std::uint64_t ph = std::uint64_t{s.height} + 2ull * s.pad_h,
                        pw = std::uint64_t{s.width} + 2ull * s.pad_w;
    if (kh > ph || kw > pw || kh > UINT32_MAX || kw > UINT32_MAX)
        invalid("the dilated kernel of " + std::to_string(kh) + " x " + std::to_string(kw) +
                " taps is larger than the padded image of " + std::to_string(ph) + " x " +
                std::to_string(pw));
    if (s.pad_h >= kh || s.pad_w >= kw)
        invalid("padding of " + std::to_string(s.pad_h) + " x " + std::to_string(s.pad_w) +
                " must be below the dilated kernel of " + std::to_string(kh) + " x " +
                std::to_string(kw) + " taps (crop the padding that no tap reaches)");
    ConvGradLowering l;
    l.spread = s.stride_h > 1 || s.stride_w > 1;
    const auto hs = static_cast<std::uint32_t>(ph - kh + 1),
               ws = static_cast<std::uint32_t>(pw - kw + 1);
    l.out_h = (hs - 1) / s.stride_h + 1;
    l.out_w = (ws - 1) / s.stride_w + 1;
    l.input_grad = {.batch = s.batch,
                    .height = hs,
                    .width = ws,
                    .channels = s.filters,
                    .kernel_h = static_cast<std::uint32_t>(kh),
                    .kernel_w = static_cast<std::uint32_t>(kw),
                    .filters = s.channels,
                    .pad_h = static_cast<std::uint32_t>(kh - 1 - s.pad_h),
                    .pad_w = static_cast<std::uint32_t>(kw - 1 - s.pad_w)};
    l.weight_grad = {.batch = s.channels,
                     .height = s.height,
                     .width = s.width,
                     .channels = s.batch,
                     .kernel_h = hs,
                     .kernel_w = ws,
                     .filters = s.filters,
                     .pad_h = s.pad_h,
                     .pad_w = s.pad_w};
    l.dys_elements = l.spread ? l.input_grad.input_elements() : 0;
    l.kernel_elements = l.input_grad.weight_elements();
    l.g_elements = l.weight_grad.output_elements();
    return l;
}

std::vector<Program> compile_conv2d_input_grad(const ConvGradProblem &p,
                                               const ArrayLimits &limits) {
    const ConvGradLowering l = lower_conv_grad(p);
    const Conv2dShape &s = p.shape, &k = l.input_grad;
    const std::uint64_t e = element_size(p.type), tap = std::uint64_t{s.channels} * s.filters * e;
    // kernel[KH' - 1 - ky dh][KW' - 1 - kx dw] = weights[ky][kx]^T.
    std::vector<Program> parts;
    for (std::uint64_t ky = 0; ky < s.kernel_h; ++ky)
        for (std::uint64_t kx = 0; kx < s.kernel_w; ++kx) {
            const std::uint64_t to = (k.kernel_h - 1 - ky * p.dilation_h) * k.kernel_w +
                                     (k.kernel_w - 1 - kx * p.dilation_w);
            append(parts, compile_transpose({.type = p.type,
                                             .rows = s.channels,
                                             .cols = s.filters,
                                             .a_addr = p.weight_addr + (ky * s.kernel_w + kx) * tap,
                                             .dst_addr = p.kernel_addr + to * tap},
                                            limits));
        }
    if (l.spread)
        append(parts, spread_dy(p, l, limits));
    std::vector<Program> programs = joined(parts);
    append(programs, compile_conv2d({.type = p.type,
                                     .shape = k,
                                     .input_addr = l.spread ? p.dys_addr : p.dy_addr,
                                     .weight_addr = p.kernel_addr,
                                     .output_addr = p.dx_addr},
                                    limits)
                         .programs);
    return programs;
}

std::vector<Program> compile_conv2d_weight_grad(const ConvGradProblem &p,
                                                const ArrayLimits &limits) {
    const ConvGradLowering l = lower_conv_grad(p);
    const Conv2dShape &s = p.shape, &w = l.weight_grad;
    std::vector<Program> parts;
    if (l.spread)
        append(parts, spread_dy(p, l, limits));
    // x as [C, H, W, N]; dys [N, HS, WS, F] is the kernel [HS, WS, N, F] as it lies: taps F
    // elements apart, its channels (the images) HS WS F.
    append(parts, compile_permute({.type = p.type,
                                   .shape = {s.batch, s.height, s.width, s.channels},
                                   .perm = {3, 1, 2, 0},
                                   .a_addr = p.x_addr,
                                   .dst_addr = p.xt_addr},
                                  limits));
    std::vector<Program> programs = joined(parts);
    const std::uint64_t e = element_size(p.type), dy_tap = std::uint64_t{s.filters} * e;
    std::vector<Program> conv =
        compile_conv2d({.type = p.type,
                        .shape = w,
                        .input_addr = p.xt_addr,
                        .weight_addr = l.spread ? p.dys_addr : p.dy_addr,
                        .output_addr = p.g_addr,
                        .weight_tap_stride = dy_tap,
                        .weight_channel_stride = std::uint64_t{w.kernel_h} * w.kernel_w * dy_tap},
                       limits)
            .programs;
    std::optional<Program> direct = detail::direct_weight_grad(p, l, limits);
    if (direct && detail::mxu_busy_cycles({*direct}) < detail::mxu_busy_cycles(conv)) {
        programs.push_back(std::move(*direct));
        return programs;
    }
    append(programs, std::move(conv));
    // dw[ky][kx] = g[:, ky dh, kx dw, :]: C rows of F accumulators per tap.
    const DType acc = accumulator_type(p.type);
    const std::uint64_t row = std::uint64_t{s.filters} * element_size(acc);
    const std::uint64_t kh = l.input_grad.kernel_h, kw = l.input_grad.kernel_w;
    std::vector<detail::BlockCopy> taps;
    for (std::uint64_t ky = 0; ky < s.kernel_h; ++ky)
        for (std::uint64_t kx = 0; kx < s.kernel_w; ++kx)
            taps.push_back({.src = p.g_addr + (ky * p.dilation_h * kw + kx * p.dilation_w) * row,
                            .src_stride = kh * kw * row,
                            .dst = p.dw_addr + (ky * s.kernel_w + kx) * s.channels * row,
                            .dst_stride = row,
                            .rows = s.channels,
                            .cols = s.filters});
    append(programs, detail::compile_block_copies(acc, taps, limits));
    return programs;
}

} // namespace tpurt
