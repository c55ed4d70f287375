// SPDX-License-Identifier: MIT
// reference_conv2d.hpp - the CPU golden models of a convolution (ops/conv2d.hpp: the card's
// numerics and reduction order) and of a convolution layer (its epilogue as reference_dense.hpp's).
#pragma once

#include "tpurt/codegen/matmul_compiler.hpp"
#include "tpurt/ops/conv2d.hpp"
#include "tpurt/types/bf16.hpp"
#include "tpurt/types/dtype.hpp"

#include <cstddef>
#include <span>
#include <vector>

namespace tpurt {

// The direct convolution on the CPU with the card's numerics and reduction order (above).
void reference_conv2d(std::span<const std::int8_t> input, std::span<const std::int8_t> weights,
                      std::span<std::int32_t> output, const Conv2dShape &shape);
void reference_conv2d(std::span<const Bf16> input, std::span<const Bf16> weights,
                      std::span<float> output, const Conv2dShape &shape);
void reference_conv2d(std::span<const float> input, std::span<const float> weights,
                      std::span<float> output, const Conv2dShape &shape);

// The convolution layer on the CPU: reference_conv2d() of `type` (input and weights raw bytes
// of it), then the epilogue's ACTIVATE steps per element (reference_dense.hpp) with bias
// fp32[F] (empty: none); returns the output as raw bytes of epilogue.out_type. Throws Error
// (InvalidArgument) for a transcendental function or arrays too small.
std::vector<std::byte> reference_conv2d_layer(DType type, std::span<const std::byte> input,
                                              std::span<const std::byte> weights,
                                              std::span<const float> bias,
                                              const MatmulEpilogue &epilogue,
                                              const Conv2dShape &shape);

} // namespace tpurt
