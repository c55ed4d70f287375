// SPDX-License-Identifier: MIT
// conv_weight_grad_direct.hpp - a stride-1 convolution's weight gradient as one program of
// matmuls that contract x and dy over (oy, ox, n) per tap, with no output computed and dropped
// (conv_weight_grad_direct.cpp), where the card holds the operands; conv_grad_compiler.cpp's
// compile_conv2d_weight_grad() uses it when it applies.
#pragma once

#include "tpurt/codegen/conv_grad_compiler.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace tpurt::detail {

// The program writing dw from the permuted xt [C, H, W, N] (the problem's scratch, written before
// it runs) and dy, or nothing when the problem is not one it takes
// (strides or dilations above 1, int8, a batch above the array's rows, filters above its columns,
// bf16 with a batch not a multiple of 32, operands beyond the unified buffer or the
// accumulators).
std::optional<Program> direct_weight_grad(const ConvGradProblem &problem,
                                          const ConvGradLowering &lowering,
                                          const ArrayLimits &limits);

// The cycles `programs` keep the matrix unit busy by the card's cycle model (docs/hardware.md):
// M + K + N - 1 per MATMUL, N the last LOAD_W's. compile_conv2d_weight_grad() takes the direct
// program only where it is the cheaper: with a few channels (the first layer's one) its MATMULs
// of C rows are mostly the array's fill and drain.
std::uint64_t mxu_busy_cycles(const std::vector<Program> &programs);

} // namespace tpurt::detail
