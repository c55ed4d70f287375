// SPDX-License-Identifier: MIT
// grouped_conv2d.hpp - 2-D convolution with groups and dilation on the card. Groups: the
// channels and the filters are cut into G groups and group g's filters see only group g's
// channels (G = C: depthwise). Dilation: kernel taps d rows / columns apart in the input.
// One executable: each group's weights are gathered into a densely packed, zeroed scratch
// kernel of (KH - 1) dh + 1 x (KW - 1) dw + 1 taps with the real taps d apart (DMA block
// copies); for G > 1 a permute (axis_compiler.hpp) gathers each group's channels into scratch,
// conv2d.hpp's programs convolve each group and a permute interleaves the groups' outputs. So
// every output is conv2d() of its group with that kernel, bit for bit: with dilation the zero
// taps add products of +0 (d^2 times the MACs; equal to the dilated sum for finite inputs, an
// infinite or NaN input under a zero tap gives NaN). Scratch tensors are allocated by each
// prepare (not pooled). Three forms as tensor_ops.hpp's.
#pragma once

#include "tpurt/card/job.hpp"
#include "tpurt/card/launch.hpp"
#include "tpurt/device.hpp"
#include "tpurt/ops/tensor_ops.hpp"
#include "tpurt/stream.hpp"
#include "tpurt/tensor.hpp"

#include <chrono>
#include <cstdint>

namespace tpurt {

struct ConvGrouping {
    std::uint32_t groups = 1;
    std::uint32_t dilation_h = 1, dilation_w = 1;
};

// input [N, H, W, C], weights [KH, KW, C / G, F], output [N, OH, OW, F] with OH = (H + 2 pad_h -
// (KH - 1) dilation_h - 1) / stride_h + 1 (OW likewise); types, strides and padding as
// conv2d()'s; C and F multiples of G; filter f belongs to group f / (F / G).
MatmulStats grouped_conv2d(Device &device, const Tensor &input, const Tensor &weights,
                           Tensor &output, const ConvGrouping &grouping,
                           const Conv2dParams &params = {},
                           std::chrono::nanoseconds timeout = Job::default_timeout);
OpLaunch prepare_grouped_conv2d(Device &device, const Tensor &input, const Tensor &weights,
                                const Tensor &output, const ConvGrouping &grouping,
                                const Conv2dParams &params = {});
void grouped_conv2d(Stream &stream, const Tensor &input, const Tensor &weights,
                    const Tensor &output, const ConvGrouping &grouping,
                    const Conv2dParams &params = {});

// The gradients of grouped_conv2d() (strides, padding below the dilated kernel and dilation as
// conv2d_input_grad() / conv2d_weight_grad() of train_ops.hpp, which they run per group): dx
// [N, H, W, C] from dy [N, OH, OW, F] and the weights; dw [KH, KW, C / G, F] from x and dy.
// Each group's operands are permuted into scratch and its result permuted back; blocking only.
// The forms with a number of groups are those without dilation.
MatmulStats grouped_conv2d_input_grad(Device &device, const Tensor &dy, const Tensor &weights,
                                      Tensor &dx, const ConvGrouping &grouping,
                                      const Conv2dParams &params = {});
MatmulStats grouped_conv2d_weight_grad(Device &device, const Tensor &x, const Tensor &dy,
                                       Tensor &dw, const ConvGrouping &grouping,
                                       const Conv2dParams &params = {});
inline MatmulStats grouped_conv2d_input_grad(Device &device, const Tensor &dy,
                                             const Tensor &weights, Tensor &dx,
                                             std::uint32_t groups,
                                             const Conv2dParams &params = {}) {
    return grouped_conv2d_input_grad(device, dy, weights, dx, ConvGrouping{.groups = groups},
                                     params);
}
inline MatmulStats grouped_conv2d_weight_grad(Device &device, const Tensor &x, const Tensor &dy,
                                              Tensor &dw, std::uint32_t groups,
                                              const Conv2dParams &params = {}) {
    return grouped_conv2d_weight_grad(device, x, dy, dw, ConvGrouping{.groups = groups}, params);
}

} // namespace tpurt
