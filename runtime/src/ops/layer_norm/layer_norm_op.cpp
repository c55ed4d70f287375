// SPDX-License-Identifier: MIT
// layer_norm_op.cpp - the layer norm kernel (compile_layer_norm() as an executable: x, gamma,
// beta, y forward; x, gamma, dy, dx, dgamma, dbeta backward) and the ops on tensors that use
// it: layer_norm and layer_norm_grad, their checks and forms (see layer_norm.hpp).
#include "exec/op_registry.hpp"
#include "ops/train/train_checks.hpp"
#include "tpurt/codegen/layer_norm_compiler.hpp"
#include "tpurt/ops/layer_norm.hpp"

#include <cstdio>
#include <initializer_list>
#include <string>
#include <utility>

namespace tpurt {

namespace detail {

namespace {

struct LayerNormKernel {
    using Problem = LayerNormProblem;
    static constexpr const char *name = "layer_norm";

    static void bind(Problem &p, OpArguments &args) {
        const std::uint64_t bytes = std::uint64_t{p.rows} * p.cols * 4;
        const std::uint64_t row = std::uint64_t{p.cols} * 4;
        args.bind(p.x_addr, "x", bytes);
        args.bind(p.gamma_addr, "gamma", row);
        if (p.backward) {
            args.bind(p.dy_addr, "dy", bytes);
            args.bind(p.dx_addr, "dx", bytes);
            args.bind(p.dgamma_addr, "dgamma", row);
            args.bind(p.dbeta_addr, "dbeta", row);
        } else {
            args.bind(p.beta_addr, "beta", row);
            args.bind(p.y_addr, "y", bytes);
        }
    }
    static std::vector<Program> compile(const Problem &p, const ArrayLimits &limits) {
        return compile_layer_norm(p, limits);
    }
    // "layer_norm fp32 64x128 eps 0x1.4f8b588e368f1p-17".
    static std::string profile_name(const Problem &p) {
        char eps[32];
        std::snprintf(eps, sizeof(eps), "%a", static_cast<double>(p.eps));
        return std::string(p.backward ? "layer_norm_grad" : "layer_norm") + " fp32 " +
               std::to_string(p.rows) + "x" + std::to_string(p.cols) + " eps " + eps;
    }
};

using Named = std::initializer_list<std::pair<const char *, const TensorLayout *>>;

// x's rows x cols, with the shapes of every other operand checked against it.
LayerNormProblem layer_norm_problem(const DeviceInfo &info, const std::string &op,
                                    const TensorLayout &x, Named same, Named vectors, float eps) {
    require_train_unit(info, op);
    require_fp32_dense(op, "x", x);
    for (const auto &[name, t] : same) {
        require_fp32_dense(op, name, *t);
        require_same_shape(op, x, name, *t);
    }
    const std::uint64_t cols = x.size(x.rank() - 1);
    for (const auto &[name, t] : vectors) {
        require_fp32_dense(op, name, *t);
        if (t->element_count() != cols)
            refuse(op, std::string(name) + " " + t->describe() + " must hold one " +
                           "value per element of x's last dimension (" + std::to_string(cols) +
                           ")");
    }
    if (!(eps >= 0.0f))
        refuse(op, "eps " + std::to_string(eps) + " must be a non-negative number");
    return {.backward = false,
            .rows = dim32(op, x.element_count() / cols, x),
            .cols = dim32(op, cols, x),
            .eps = eps};
}

struct LayerNormOp {
    using Kernel = LayerNormKernel;
    static constexpr const char *name = "layer_norm";
    static constexpr std::array<OpOperand, 4> operands{{{"x"}, {"gamma"}, {"beta"}, {"y"}}};
    struct Attributes {
        float eps = 1e-5f;
    };
    static constexpr std::array<const char *, 1> attributes{"eps"};

    static LayerNormProblem check(const DeviceInfo &info, const Layouts<LayerNormOp> &t,
                                  const Attributes &attributes) {
        return layer_norm_problem(info, name, *t[0], {{"y", t[3]}},
                                  {{"gamma", t[1]}, {"beta", t[2]}}, attributes.eps);
    }
};

struct LayerNormGradOp {
    using Kernel = LayerNormKernel;
    static constexpr const char *name = "layer_norm_grad";
    static constexpr std::array<OpOperand, 6> operands{
        {{"x"}, {"gamma"}, {"dy"}, {"dx"}, {"dgamma"}, {"dbeta"}}};
    struct Attributes {
        float eps = 1e-5f;
    };
    static constexpr std::array<const char *, 1> attributes{"eps"};

    static LayerNormProblem check(const DeviceInfo &info, const Layouts<LayerNormGradOp> &t,
                                  const Attributes &attributes) {
        LayerNormProblem problem = layer_norm_problem(
            info, name, *t[0], {{"dy", t[2]}, {"dx", t[3]}},
            {{"gamma", t[1]}, {"dgamma", t[4]}, {"dbeta", t[5]}}, attributes.eps);
        problem.backward = true;
        return problem;
    }
};

} // namespace

} // namespace detail

TPURT_KERNEL(detail::LayerNormKernel);
TPURT_REGISTER_OP(layer_norm_op, LayerNormOp);
TPURT_REGISTER_OP(layer_norm_grad_op, LayerNormGradOp);

using detail::LayerNormGradOp;
using detail::LayerNormOp;

OpLaunch prepare_layer_norm(Device &device, const Tensor &x, const Tensor &gamma,
                            const Tensor &beta, const Tensor &y, float eps) {
    return detail::prepare<LayerNormOp>(device, {&x, &gamma, &beta, &y}, {eps});
}
MatmulStats layer_norm(Device &device, const Tensor &x, const Tensor &gamma, const Tensor &beta,
                       Tensor &y, float eps, std::chrono::nanoseconds timeout) {
    return detail::run<LayerNormOp>(device, {&x, &gamma, &beta, &y}, {eps}, timeout);
}
void layer_norm(Stream &stream, const Tensor &x, const Tensor &gamma, const Tensor &beta,
                const Tensor &y, float eps) {
    detail::enqueue<LayerNormOp>(stream, {&x, &gamma, &beta, &y}, {eps});
}

OpLaunch prepare_layer_norm_grad(Device &device, const Tensor &x, const Tensor &gamma,
                                 const Tensor &dy, const Tensor &dx, const Tensor &dgamma,
                                 const Tensor &dbeta, float eps) {
    return detail::prepare<LayerNormGradOp>(device, {&x, &gamma, &dy, &dx, &dgamma, &dbeta}, {eps});
}
MatmulStats layer_norm_grad(Device &device, const Tensor &x, const Tensor &gamma, const Tensor &dy,
                            Tensor &dx, Tensor &dgamma, Tensor &dbeta, float eps,
                            std::chrono::nanoseconds timeout) {
    return detail::run<LayerNormGradOp>(device, {&x, &gamma, &dy, &dx, &dgamma, &dbeta}, {eps},
                                        timeout);
}
void layer_norm_grad(Stream &stream, const Tensor &x, const Tensor &gamma, const Tensor &dy,
                     const Tensor &dx, const Tensor &dgamma, const Tensor &dbeta, float eps) {
    detail::enqueue<LayerNormGradOp>(stream, {&x, &gamma, &dy, &dx, &dgamma, &dbeta}, {eps});
}

} // namespace tpurt
