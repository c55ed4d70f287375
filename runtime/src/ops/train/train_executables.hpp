// SPDX-License-Identifier: MIT
// train_executables.hpp - the training ops of train_compiler.hpp and layer_norm_compiler.hpp as
// executables, compiled once per shape and card geometry and cached per device like
// op_executables.hpp's.
#pragma once

#include "tpurt/codegen/layer_norm_compiler.hpp"
#include "tpurt/codegen/train_compiler.hpp"
#include "tpurt/executable.hpp"

#include <memory>

namespace tpurt {

class Device;

// Arguments: x, out (Softmax, LogSoftmax); x, targets, grad, loss (CrossEntropy).
Executable compile_softmax_executable(const SoftmaxProblem &problem, const ArrayLimits &limits);
// Arguments: saved, dy, dx.
Executable compile_activation_grad_executable(const ActivationGradProblem &problem,
                                              const ArrayLimits &limits);
// Arguments: w, g, m, hp, then v (Adam), then the bf16 copy (with bf16_copy).
Executable compile_optimizer_executable(const OptimizerProblem &problem, const ArrayLimits &limits);
// Arguments: x, y, dy, dx (MAX); dy, dx (AVG).
Executable compile_pool_grad_executable(const PoolGradProblem &problem, const ArrayLimits &limits);
// Arguments: x, gamma, beta, y (forward); x, gamma, dy, dx, dgamma, dbeta (backward).
Executable compile_layer_norm_executable(const LayerNormProblem &problem,
                                         const ArrayLimits &limits);

std::shared_ptr<const Executable> softmax_executable(Device &device, const SoftmaxProblem &problem);
std::shared_ptr<const Executable> activation_grad_executable(Device &device,
                                                             const ActivationGradProblem &problem);
std::shared_ptr<const Executable> optimizer_executable(Device &device,
                                                       const OptimizerProblem &problem);
std::shared_ptr<const Executable> pool_grad_executable(Device &device,
                                                       const PoolGradProblem &problem);
std::shared_ptr<const Executable> layer_norm_executable(Device &device,
                                                        const LayerNormProblem &problem);

} // namespace tpurt
