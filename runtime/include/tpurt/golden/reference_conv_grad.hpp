// SPDX-License-Identifier: MIT
// reference_conv_grad.hpp - the CPU golden models of a convolution's gradients, lowered exactly as
// codegen/conv_grad_compiler.hpp lowers them for the card.
#pragma once

#include "tpurt/codegen/conv_grad_compiler.hpp"

#include <cstddef>
#include <span>
#include <vector>

namespace tpurt {

// The gradients on the CPU, exactly as the card computes them: the lowered operands built element
// by element, then reference_conv2d(). Operands are raw bytes of problem.type (densely packed,
// dy of the forward output's shape); the result raw bytes of its accumulator type (dx [N, H, W,
// C], dw [KH, KW, C, F]). Throws Error(InvalidArgument) as lower_conv_grad() or for arrays of
// the wrong size.
std::vector<std::byte> reference_conv2d_input_grad(const ConvGradProblem &problem,
                                                   std::span<const std::byte> dy,
                                                   std::span<const std::byte> weights);
std::vector<std::byte> reference_conv2d_weight_grad(const ConvGradProblem &problem,
                                                    std::span<const std::byte> x,
                                                    std::span<const std::byte> dy);

} // namespace tpurt
