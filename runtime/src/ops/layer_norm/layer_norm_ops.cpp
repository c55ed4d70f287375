// SPDX-License-Identifier: MIT
// layer_norm_ops.cpp - checks layer normalisation's tensor operands, fetches its executables and
// gives its blocking and stream forms (see layer_norm.hpp).
#include "tpurt/ops/layer_norm.hpp"

#include "ops/train/train_checks.hpp"
#include "ops/train/train_executables.hpp"

#include <string>

namespace tpurt {

namespace {

using detail::refuse;

// x's rows x cols, with the shapes of every other operand checked against it.
LayerNormProblem problem_of(const std::string &op, Device &device, const Tensor &x,
                            std::initializer_list<std::pair<const char *, const Tensor *>> same,
                            std::initializer_list<std::pair<const char *, const Tensor *>> vectors,
                            float eps) {
    detail::require_train_unit(device.info(), op);
    detail::require_fp32_dense(op, "x", x);
    for (const auto &[name, t] : same) {
        detail::require_fp32_dense(op, name, *t);
        detail::require_same_shape(op, x, name, *t);
    }
    const std::uint64_t cols = x.size(x.rank() - 1);
    for (const auto &[name, t] : vectors) {
        detail::require_fp32_dense(op, name, *t);
        if (t->element_count() != cols)
            refuse(op, std::string(name) + " " + t->layout().describe() + " must hold one " +
                           "value per element of x's last dimension (" + std::to_string(cols) +
                           ")");
    }
    if (!(eps >= 0.0f))
        refuse(op, "eps " + std::to_string(eps) + " must be a non-negative number");
    return {.backward = false,
            .rows = detail::dim32(op, x.element_count() / cols, x),
            .cols = detail::dim32(op, cols, x),
            .eps = eps};
}

} // namespace

OpLaunch prepare_layer_norm(Device &device, const Tensor &x, const Tensor &gamma,
                            const Tensor &beta, const Tensor &y, float eps) {
    const LayerNormProblem problem =
        problem_of("layer_norm", device, x, {{"y", &y}}, {{"gamma", &gamma}, {"beta", &beta}}, eps);
    return launch_of(layer_norm_executable(device, problem), {&x, &gamma, &beta, &y});
}

OpLaunch prepare_layer_norm_grad(Device &device, const Tensor &x, const Tensor &gamma,
                                 const Tensor &dy, const Tensor &dx, const Tensor &dgamma,
                                 const Tensor &dbeta, float eps) {
    LayerNormProblem problem =
        problem_of("layer_norm_grad", device, x, {{"dy", &dy}, {"dx", &dx}},
                   {{"gamma", &gamma}, {"dgamma", &dgamma}, {"dbeta", &dbeta}}, eps);
    problem.backward = true;
    return launch_of(layer_norm_executable(device, problem),
                     {&x, &gamma, &dy, &dx, &dgamma, &dbeta});
}

MatmulStats layer_norm(Device &device, const Tensor &x, const Tensor &gamma, const Tensor &beta,
                       Tensor &y, float eps, std::chrono::nanoseconds timeout) {
    return prepare_layer_norm(device, x, gamma, beta, y, eps).run(device, timeout);
}
void layer_norm(Stream &stream, const Tensor &x, const Tensor &gamma, const Tensor &beta,
                const Tensor &y, float eps) {
    stream.enqueue(prepare_layer_norm(stream.device(), x, gamma, beta, y, eps));
}

MatmulStats layer_norm_grad(Device &device, const Tensor &x, const Tensor &gamma, const Tensor &dy,
                            Tensor &dx, Tensor &dgamma, Tensor &dbeta, float eps,
                            std::chrono::nanoseconds timeout) {
    return prepare_layer_norm_grad(device, x, gamma, dy, dx, dgamma, dbeta, eps)
        .run(device, timeout);
}
void layer_norm_grad(Stream &stream, const Tensor &x, const Tensor &gamma, const Tensor &dy,
                     const Tensor &dx, const Tensor &dgamma, const Tensor &dbeta, float eps) {
    stream.enqueue(prepare_layer_norm_grad(stream.device(), x, gamma, dy, dx, dgamma, dbeta, eps));
}

} // namespace tpurt
