// SPDX-License-Identifier: MIT
// reference_pool_grad.hpp - the CPU golden model of the max and average pooling gradients
// (codegen/train_compiler.hpp's PoolGradProblem).
#pragma once

#include "tpurt/codegen/train_compiler.hpp"

#include <cstddef>
#include <span>
#include <vector>

namespace tpurt {

// The same gradient on the CPU by plain loops over the windows in row-major order (fp32 values:
// bf16 operands widened; a bf16 dx is this rounded). x and y are read for MAX only.
std::vector<float> reference_pool_grad(const PoolGradProblem &problem, std::span<const float> x,
                                       std::span<const float> y, std::span<const float> dy);

} // namespace tpurt
