// SPDX-License-Identifier: MIT
// grouped_conv2d.hpp - 2-D convolution with groups on the card: the channels and the filters
// are cut into G groups and group g's filters see only group g's channels (G = C: depthwise).
// One executable: a permute (axis_compiler.hpp) gathers each group's channels and filters into
// densely packed scratch tensors, conv2d.hpp's programs convolve each group, and a permute
// interleaves the groups' outputs; so every output equals conv2d() of its group bit for bit.
// The scratch tensors are allocated by each prepare (not pooled). Three forms as tensor_ops.hpp's.
#pragma once

#include "tpurt/device.hpp"
#include "tpurt/job.hpp"
#include "tpurt/launch.hpp"
#include "tpurt/stream.hpp"
#include "tpurt/tensor.hpp"
#include "tpurt/tensor_ops.hpp"

#include <chrono>
#include <cstdint>

namespace tpurt {

// input [N, H, W, C], weights [KH, KW, C / G, F], output [N, OH, OW, F] (types, strides and
// padding as conv2d()'s); C and F multiples of G; filter f belongs to group f / (F / G).
MatmulStats grouped_conv2d(Device &device, const Tensor &input, const Tensor &weights,
                           Tensor &output, std::uint32_t groups, const Conv2dParams &params = {},
                           std::chrono::nanoseconds timeout = Job::default_timeout);
OpLaunch prepare_grouped_conv2d(Device &device, const Tensor &input, const Tensor &weights,
                                const Tensor &output, std::uint32_t groups,
                                const Conv2dParams &params = {});
void grouped_conv2d(Stream &stream, const Tensor &input, const Tensor &weights,
                    const Tensor &output, std::uint32_t groups, const Conv2dParams &params = {});

} // namespace tpurt
