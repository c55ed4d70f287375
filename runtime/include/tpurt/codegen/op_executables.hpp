// SPDX-License-Identifier: MIT
// op_executables.hpp - the runtime's ops as executables: pure functions of an op's shape and
// the card's limits (no device), compiled by the op compilers with the arguments at their
// placeholder addresses and linked (see executable.hpp). The op entry points (matmul, dense,
// conv2d, on buffers, host arrays or tensors) fetch these from the device's cache, so each
// shape is compiled once per device and card geometry.
#pragma once

#include "tpurt/codegen/matmul_compiler.hpp"
#include "tpurt/codegen/vector_compiler.hpp"
#include "tpurt/device_info.hpp"
#include "tpurt/executable.hpp"
#include "tpurt/ops/conv2d.hpp"

#include <memory>
#include <optional>
#include <string>

namespace tpurt {

class Device;

// Arguments: A, B, C, and the bias when the epilogue has one. The problem's addresses are
// ignored (only whether an epilogue bias is present counts); its strides (0: dense) and
// shapes define the executable.
Executable compile_matmul_executable(const MatmulProblem &problem, const ArrayLimits &limits);
// Arguments: input, weights, output (densely packed NHWC, HWIO, NHWC), and the bias when the
// epilogue has one (a convolution layer; its bias_addr only says whether there is a bias).
Executable compile_conv2d_executable(DType type, const Conv2dShape &shape,
                                     const ArrayLimits &limits,
                                     const std::optional<MatmulEpilogue> &epilogue = std::nullopt);

// Arguments: a, b, dst (the problem's addresses are ignored).
Executable compile_elementwise_executable(const ElementwiseProblem &problem,
                                          const ArrayLimits &limits);
// Arguments: a, dst.
Executable compile_pool_executable(const PoolProblem &problem, const ArrayLimits &limits);
// Arguments: a, dst.
Executable compile_transpose_executable(const TransposeProblem &problem, const ArrayLimits &limits);
// Arguments: a, dst.
Executable compile_unary_executable(const UnaryProblem &problem, const ArrayLimits &limits);
// Arguments: a, dst.
Executable compile_reduce_executable(const ReduceProblem &problem, const ArrayLimits &limits);

// The cache keys: everything that changes the programs, spelled out.
std::string matmul_executable_key(const MatmulProblem &problem, const ArrayLimits &limits);
std::string conv2d_executable_key(DType type, const Conv2dShape &shape, const ArrayLimits &limits,
                                  const std::optional<MatmulEpilogue> &epilogue = std::nullopt);

std::string elementwise_executable_key(const ElementwiseProblem &problem,
                                       const ArrayLimits &limits);
std::string reduce_executable_key(const ReduceProblem &problem, const ArrayLimits &limits);
std::string unary_executable_key(const UnaryProblem &problem, const ArrayLimits &limits);
std::string transpose_executable_key(const TransposeProblem &problem, const ArrayLimits &limits);
std::string pool_executable_key(const PoolProblem &problem, const ArrayLimits &limits);

// From the device's cache, compiled on the first use of the key.
std::shared_ptr<const Executable> matmul_executable(Device &device, const MatmulProblem &problem);
std::shared_ptr<const Executable>
conv2d_executable(Device &device, DType type, const Conv2dShape &shape,
                  const std::optional<MatmulEpilogue> &epilogue = std::nullopt);

std::shared_ptr<const Executable> elementwise_executable(Device &device,
                                                         const ElementwiseProblem &problem);
std::shared_ptr<const Executable> reduce_executable(Device &device, const ReduceProblem &problem);
std::shared_ptr<const Executable> unary_executable(Device &device, const UnaryProblem &problem);
std::shared_ptr<const Executable> transpose_executable(Device &device,
                                                       const TransposeProblem &problem);
std::shared_ptr<const Executable> pool_executable(Device &device, const PoolProblem &problem);

} // namespace tpurt
