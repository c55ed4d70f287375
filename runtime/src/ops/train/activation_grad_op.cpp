// SPDX-License-Identifier: MIT
// activation_grad_op.cpp - the activation gradient kernel (compile_activation_grad() as an
// executable: saved, dy, dx) and the activation_grad op on tensors: dx from dy and the forward
// input (ReLU, GELU) or output (sigmoid, tanh).
#include "exec/op_registry.hpp"
#include "ops/train/train_checks.hpp"
#include "tpurt/codegen/train_compiler.hpp"
#include "tpurt/ops/train_ops.hpp"

#include <string>

namespace tpurt {

namespace detail {

namespace {

struct ActivationGradKernel {
    using Problem = ActivationGradProblem;
    static constexpr const char *name = "activation_grad";

    static void bind(Problem &p, OpArguments &args) {
        args.bind(p.x_addr, "saved", p.elements * element_size(p.x_type));
        args.bind(p.dy_addr, "dy", p.elements * element_size(p.dy_type));
        args.bind(p.dx_addr, "dx", p.elements * element_size(p.dx_type));
    }
    static std::vector<Program> compile(const Problem &p, const ArrayLimits &limits) {
        return compile_activation_grad(p, limits);
    }
    // "relu_grad fp32 4096", "gelu_grad bf16 fp32 bf16 4096".
    static std::string profile_name(const Problem &p) {
        return std::string(grad_function_name(p.function)) + " " +
               dtypes_name({p.x_type, p.dy_type, p.dx_type}) + " " + std::to_string(p.elements);
    }
};

struct ActivationGradOp {
    using Kernel = ActivationGradKernel;
    static constexpr const char *name = "activation_grad";
    static constexpr std::array<OpOperand, 3> operands{{{"saved"}, {"dy"}, {"dx"}}};
    struct Attributes {
        GradFunction function = GradFunction::Relu;
    };
    static constexpr std::array<const char *, 1> attributes{"function"};

    static ActivationGradProblem check(const DeviceInfo &info, const Layouts<ActivationGradOp> &t,
                                       const Attributes &attributes) {
        const std::string op = grad_function_name(attributes.function);
        const TensorLayout &saved = *t[0], &dy = *t[1], &dx = *t[2];
        require_train_unit(info, op);
        const DType x_type = require_float_dense(op, "saved", saved);
        const DType dy_type = require_float_dense(op, "dy", dy);
        const DType dx_type = require_float_dense(op, "dx", dx);
        require_same_shape(op, saved, "dy", dy);
        require_same_shape(op, saved, "dx", dx);
        return {.function = attributes.function,
                .elements = saved.element_count(),
                .x_type = x_type,
                .dy_type = dy_type,
                .dx_type = dx_type};
    }
};

} // namespace

} // namespace detail

TPURT_KERNEL(detail::ActivationGradKernel);
TPURT_REGISTER_OP(activation_grad_op, ActivationGradOp);

using detail::ActivationGradOp;

OpLaunch prepare_activation_grad(Device &device, GradFunction function, const Tensor &saved,
                                 const Tensor &dy, const Tensor &dx) {
    return detail::prepare<ActivationGradOp>(device, {&saved, &dy, &dx}, {function});
}
MatmulStats activation_grad(Device &device, GradFunction function, const Tensor &saved,
                            const Tensor &dy, Tensor &dx, std::chrono::nanoseconds timeout) {
    return detail::run<ActivationGradOp>(device, {&saved, &dy, &dx}, {function}, timeout);
}
void activation_grad(Stream &stream, GradFunction function, const Tensor &saved, const Tensor &dy,
                     const Tensor &dx) {
    detail::enqueue<ActivationGradOp>(stream, {&saved, &dy, &dx}, {function});
}

} // namespace tpurt
