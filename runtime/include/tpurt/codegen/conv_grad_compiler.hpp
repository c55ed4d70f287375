// SPDX-License-Identifier: MIT
// conv_grad_compiler.hpp - compiles the gradients of a convolution (conv2d.hpp's, with strides,
// zero padding and dilated kernel taps) into card programs, lowered to a stride-1 convolution:
//
//   dy spread out: dys [N, HS, WS, F] with HS = H + 2 pad_h - KH' + 1 (the stride-1 output's
//   height, KH' = (KH - 1) dilation_h + 1 the dilated kernel's; WS likewise), dys[n][oy sh][ox
//   sw] = dy[n][oy][ox] and zeros between (block copies into zeroed scratch; dy itself for
//   strides of 1);
//   input gradient: dx [N, H, W, C] = conv2d(dys, kernel [KH', KW', F, C], stride 1, padding
//   KH' - 1 - pad_h, KW' - 1 - pad_w), the kernel the weights flipped in space, transposed in
//   channels (TRANSPOSE per tap) and dilated (zero taps between);
//   weight gradient: g [C, KH', KW', F] = conv2d(x as [C, H, W, N] (batch as channels), dys as
//   the kernel [HS, WS, N, F], stride 1, padding pad), both permuted into scratch; dw [KH, KW,
//   C, F] = g's taps (ky dilation_h, kx dilation_w), gathered by block copies.
//
// So each result equals reference_conv2d() of those lowered operands, bit for bit, with conv2d's
// numerics: fp32 or bf16 (blocks of 32 over F, resp. N) operands -> fp32, int8 -> int32. The
// zeros of the spreading and the dilation add products of +0 (strides^2 resp. dilations^2 times
// the MACs of the dense problem; equal to the sparse sums for finite values).
// Scratch is zero before the first run (fresh pages); the programs write only the places that
// hold values, so they may run again on it.
#pragma once

#include "tpurt/codegen/program_builder.hpp"
#include "tpurt/device_info.hpp"
#include "tpurt/ops/conv2d.hpp"
#include "tpurt/types/dtype.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tpurt {

struct ConvGradProblem {
    DType type = DType::Fp32; // x, dy and the weights: int8, bf16 or fp32
    Conv2dShape shape;        // the forward convolution, kernel_h x kernel_w taps (undilated)
    std::uint32_t dilation_h = 1, dilation_w = 1;
    // Input gradient: dy, weights -> dx (accumulator type); scratch dys (strides > 1), kernel.
    // Weight gradient: x, dy -> dw (accumulator type); scratch dys (strides > 1), xt, g.
    std::uint64_t x_addr = 0, dy_addr = 0, weight_addr = 0, dx_addr = 0, dw_addr = 0;
    std::uint64_t dys_addr = 0, kernel_addr = 0, xt_addr = 0, g_addr = 0;
};

// The stride-1 problems a ConvGradProblem lowers to. Throws Error(InvalidArgument) for empty
// shapes, strides or dilations of 0, a dilated kernel larger than the padded image or padding
// not below it (the input gradient's padding KH' - 1 - pad would be negative).
struct ConvGradLowering {
    bool spread = false;     // strides above 1: dy spread into dys
    std::uint32_t out_h = 0; // the forward output: dy [N, out_h, out_w, F]
    std::uint32_t out_w = 0;
    Conv2dShape input_grad; // dys [N, HS, WS, F] x kernel [KH', KW', F, C] -> dx
    // xt [C, H, W, N] x dys read as [HS, WS, N, F] -> g [C, KH', KW', F]
    Conv2dShape weight_grad;
    std::uint64_t dys_elements = 0, kernel_elements = 0, g_elements = 0;
};
ConvGradLowering lower_conv_grad(const ConvGradProblem &problem);

std::vector<Program> compile_conv2d_input_grad(const ConvGradProblem &problem,
                                               const ArrayLimits &limits);
std::vector<Program> compile_conv2d_weight_grad(const ConvGradProblem &problem,
                                                const ArrayLimits &limits);

} // namespace tpurt
