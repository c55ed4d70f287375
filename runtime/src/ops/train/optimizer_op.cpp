// SPDX-License-Identifier: MIT
// optimizer_op.cpp - the optimizer kernel (compile_optimizer() as an executable: w, g, m, hp,
// then v for Adam, then the bf16 copy) and the ops on tensors that use it: sgd_momentum_step
// and adam_step, their checks and forms.
#include "exec/op_registry.hpp"
#include "ops/train/train_checks.hpp"
#include "tpurt/codegen/train_compiler.hpp"
#include "tpurt/ops/train_ops.hpp"

#include <string>

namespace tpurt {

namespace detail {

namespace {

struct OptimizerKernel {
    using Problem = OptimizerProblem;
    static constexpr const char *name = "optimizer";

    static void bind(Problem &p, OpArguments &args) {
        const std::uint64_t bytes = p.elements * 4;
        args.bind(p.w_addr, "w", bytes);
        args.bind(p.g_addr, "g", bytes);
        args.bind(p.m_addr, "m", bytes);
        args.bind(p.hp_addr, "hp", optimizer_hp_count * 4);
        if (p.kind == OptimizerKind::Adam)
            args.bind(p.v_addr, "v", bytes);
        if (p.bf16_copy)
            args.bind(p.bf16_addr, "w_bf16", p.elements * 2);
    }
    static std::vector<Program> compile(const Problem &p, const ArrayLimits &limits) {
        return compile_optimizer(p, limits);
    }
    // "adam fp32 4096", "sgd_momentum fp32 4096 +bf16".
    static std::string profile_name(const Problem &p) {
        return std::string(optimizer_name(p.kind)) + " fp32 " + std::to_string(p.elements) +
               (p.bf16_copy ? " +bf16" : "");
    }
};

// w, g, m (and v) fp32 of one shape, hp the fp32[8] hyperparameters, the bf16 copy optional.
OptimizerProblem optimizer_problem(const DeviceInfo &info, OptimizerKind kind,
                                   const TensorLayout &w, const TensorLayout &g,
                                   const TensorLayout &m, const TensorLayout &hp,
                                   const TensorLayout *v, const TensorLayout *w_bf16) {
    const std::string op = optimizer_name(kind);
    require_train_unit(info, op);
    require_fp32_dense(op, "w", w);
    require_fp32_dense(op, "g", g);
    require_fp32_dense(op, "state", m);
    require_fp32_dense(op, "hp", hp);
    require_same_shape(op, w, "g", g);
    require_same_shape(op, w, "state", m);
    if (v) {
        require_fp32_dense(op, "v", *v);
        require_same_shape(op, w, "v", *v);
    }
    if (hp.element_count() != optimizer_hp_count)
        refuse(op, "hp " + hp.describe() + " must hold " + std::to_string(optimizer_hp_count) +
                       " fp32 hyperparameters");
    if (w_bf16 && (w_bf16->dtype() != DType::Bf16 || !w_bf16->is_contiguous() ||
                   w_bf16->element_count() != w.element_count()))
        refuse(op, "w_bf16 " + w_bf16->describe() +
                       " must be a densely packed bf16 tensor of w's element count");
    return {.kind = kind, .elements = w.element_count(), .bf16_copy = w_bf16 != nullptr};
}

struct SgdMomentumOp {
    using Kernel = OptimizerKernel;
    static constexpr const char *name = "sgd_momentum_step";
    static constexpr std::array<OpOperand, 5> operands{
        {{"w"}, {"g"}, {"momentum"}, {"hp"}, {"w_bf16", true}}};
    struct Attributes {};
    static constexpr std::array<const char *, 0> attributes{};

    static OptimizerProblem check(const DeviceInfo &info, const Layouts<SgdMomentumOp> &t,
                                  const Attributes &) {
        return optimizer_problem(info, OptimizerKind::SgdMomentum, *t[0], *t[1], *t[2], *t[3],
                                 nullptr, t[4]);
    }
};

struct AdamOp {
    using Kernel = OptimizerKernel;
    static constexpr const char *name = "adam_step";
    static constexpr std::array<OpOperand, 6> operands{
        {{"w"}, {"g"}, {"m"}, {"hp"}, {"v"}, {"w_bf16", true}}};
    struct Attributes {};
    static constexpr std::array<const char *, 0> attributes{};

    static OptimizerProblem check(const DeviceInfo &info, const Layouts<AdamOp> &t,
                                  const Attributes &) {
        return optimizer_problem(info, OptimizerKind::Adam, *t[0], *t[1], *t[2], *t[3], t[4], t[5]);
    }
};

} // namespace

} // namespace detail

TPURT_KERNEL(detail::OptimizerKernel);
TPURT_REGISTER_OP(sgd_momentum_step_op, SgdMomentumOp);
TPURT_REGISTER_OP(adam_step_op, AdamOp);

using detail::AdamOp;
using detail::SgdMomentumOp;

OpLaunch prepare_sgd_momentum_step(Device &device, const Tensor &w, const Tensor &g,
                                   const Tensor &momentum, const Tensor &hp, const Tensor *w_bf16) {
    return detail::prepare<SgdMomentumOp>(device, {&w, &g, &momentum, &hp, w_bf16});
}
MatmulStats sgd_momentum_step(Device &device, Tensor &w, const Tensor &g, Tensor &momentum,
                              const Tensor &hp, Tensor *w_bf16, std::chrono::nanoseconds timeout) {
    return detail::run<SgdMomentumOp>(device, {&w, &g, &momentum, &hp, w_bf16}, {}, timeout);
}
void sgd_momentum_step(Stream &stream, const Tensor &w, const Tensor &g, const Tensor &momentum,
                       const Tensor &hp, const Tensor *w_bf16) {
    detail::enqueue<SgdMomentumOp>(stream, {&w, &g, &momentum, &hp, w_bf16});
}

OpLaunch prepare_adam_step(Device &device, const Tensor &w, const Tensor &g, const Tensor &m,
                           const Tensor &v, const Tensor &hp, const Tensor *w_bf16) {
    return detail::prepare<AdamOp>(device, {&w, &g, &m, &hp, &v, w_bf16});
}
MatmulStats adam_step(Device &device, Tensor &w, const Tensor &g, Tensor &m, Tensor &v,
                      const Tensor &hp, Tensor *w_bf16, std::chrono::nanoseconds timeout) {
    return detail::run<AdamOp>(device, {&w, &g, &m, &hp, &v, w_bf16}, {}, timeout);
}
void adam_step(Stream &stream, const Tensor &w, const Tensor &g, const Tensor &m, const Tensor &v,
               const Tensor &hp, const Tensor *w_bf16) {
    detail::enqueue<AdamOp>(stream, {&w, &g, &m, &hp, &v, w_bf16});
}

} // namespace tpurt
