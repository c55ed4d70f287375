// SPDX-License-Identifier: MIT
// layer_norm.hpp - layer normalisation over the last dimension of a tensor, with its learned
// scale gamma and shift beta, and its gradient, on the card (spec 1.4, TPU_CAP_VPU_TRAIN; the
// programs and their exact arithmetic are layer_norm_compiler.hpp's). x, y, dy and dx are
// densely packed fp32 tensors of one shape [..., C]; gamma, beta, dgamma and dbeta densely
// packed fp32 tensors of C elements. Each op in the three forms of tensor_ops.hpp.
#pragma once

#include "tpurt/card/job.hpp"
#include "tpurt/card/launch.hpp"
#include "tpurt/codegen/layer_norm_compiler.hpp"
#include "tpurt/device.hpp"
#include "tpurt/stream.hpp"
#include "tpurt/tensor.hpp"

#include <chrono>

namespace tpurt {

// y = (x - mean) / sqrt(var + eps) * gamma + beta, mean and (biased) variance over each row.
MatmulStats layer_norm(Device &device, const Tensor &x, const Tensor &gamma, const Tensor &beta,
                       Tensor &y, float eps = 1e-5f,
                       std::chrono::nanoseconds timeout = Job::default_timeout);
OpLaunch prepare_layer_norm(Device &device, const Tensor &x, const Tensor &gamma,
                            const Tensor &beta, const Tensor &y, float eps = 1e-5f);
void layer_norm(Stream &stream, const Tensor &x, const Tensor &gamma, const Tensor &beta,
                const Tensor &y, float eps = 1e-5f);

// The gradients of layer_norm() from its input x (the statistics are recomputed) and the
// output gradient dy: dx (x's shape), dgamma = sum over rows of dy * xh, dbeta = sum of dy.
MatmulStats layer_norm_grad(Device &device, const Tensor &x, const Tensor &gamma, const Tensor &dy,
                            Tensor &dx, Tensor &dgamma, Tensor &dbeta, float eps = 1e-5f,
                            std::chrono::nanoseconds timeout = Job::default_timeout);
OpLaunch prepare_layer_norm_grad(Device &device, const Tensor &x, const Tensor &gamma,
                                 const Tensor &dy, const Tensor &dx, const Tensor &dgamma,
                                 const Tensor &dbeta, float eps = 1e-5f);
void layer_norm_grad(Stream &stream, const Tensor &x, const Tensor &gamma, const Tensor &dy,
                     const Tensor &dx, const Tensor &dgamma, const Tensor &dbeta,
                     float eps = 1e-5f);

} // namespace tpurt
