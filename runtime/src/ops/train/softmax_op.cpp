// SPDX-License-Identifier: MIT
// softmax_op.cpp - the softmax kernel (compile_softmax() as an executable: x, out; or x,
// targets, grad, loss for the cross-entropy) and the ops on tensors that use it: softmax,
// log_softmax and softmax_cross_entropy over the last dimension, their checks and forms.
#include "exec/op_registry.hpp"
#include "ops/train/train_checks.hpp"
#include "tpurt/codegen/train_compiler.hpp"
#include "tpurt/ops/train_ops.hpp"

#include <cstdio>
#include <string>

namespace tpurt {

namespace detail {

namespace {

struct SoftmaxKernel {
    using Problem = SoftmaxProblem;
    static constexpr const char *name = "softmax";

    static void bind(Problem &p, OpArguments &args) {
        const std::uint64_t elements = std::uint64_t{p.rows} * p.cols;
        args.bind(p.x_addr, "x", elements * element_size(p.x_type));
        if (p.kind == SoftmaxKind::CrossEntropy) {
            args.bind(p.target_addr, "targets", elements * 4);
            args.bind(p.out_addr, "grad", elements * element_size(p.out_type));
            args.bind(p.loss_addr, "loss", std::uint64_t{p.rows} * 4);
        } else {
            args.bind(p.out_addr, "out", elements * element_size(p.out_type));
        }
    }
    static std::vector<Program> compile(const Problem &p, const ArrayLimits &limits) {
        return compile_softmax(p, limits);
    }
    // "softmax fp32 64x10", "softmax_cross_entropy bf16 fp32 64x10 scale 0x1p-6".
    static std::string profile_name(const Problem &p) {
        char scale[32];
        std::snprintf(scale, sizeof(scale), "%a", static_cast<double>(p.grad_scale));
        return std::string(softmax_kind_name(p.kind)) + " " + dtypes_name({p.x_type, p.out_type}) +
               " " + std::to_string(p.rows) + "x" + std::to_string(p.cols) +
               (p.kind == SoftmaxKind::CrossEntropy ? std::string(" scale ") + scale : "");
    }
};

SoftmaxProblem softmax_problem(const DeviceInfo &info, SoftmaxKind kind, const TensorLayout &x,
                               const TensorLayout &out) {
    const std::string op = softmax_kind_name(kind);
    require_train_unit(info, op);
    const DType x_type = require_float_dense(op, "x", x);
    const DType out_type = require_float_dense(op, "out", out);
    require_same_shape(op, x, "out", out);
    const std::uint64_t cols = x.size(x.rank() - 1);
    return {.kind = kind,
            .rows = dim32(op, x.element_count() / cols, x),
            .cols = dim32(op, cols, x),
            .x_type = x_type,
            .out_type = out_type};
}

template <SoftmaxKind kind, const char *op_name> struct SoftmaxOp {
    using Kernel = SoftmaxKernel;
    static constexpr const char *name = op_name;
    static constexpr std::array<OpOperand, 2> operands{{{"x"}, {"out"}}};
    struct Attributes {};
    static constexpr std::array<const char *, 0> attributes{};

    static SoftmaxProblem check(const DeviceInfo &info, const Layouts<SoftmaxOp> &t,
                                const Attributes &) {
        return softmax_problem(info, kind, *t[0], *t[1]);
    }
};

constexpr char softmax_name[] = "softmax", log_softmax_name[] = "log_softmax";
using PlainSoftmaxOp = SoftmaxOp<SoftmaxKind::Softmax, softmax_name>;
using LogSoftmaxOp = SoftmaxOp<SoftmaxKind::LogSoftmax, log_softmax_name>;

struct CrossEntropyOp {
    using Kernel = SoftmaxKernel;
    static constexpr const char *name = "softmax_cross_entropy";
    static constexpr std::array<OpOperand, 4> operands{
        {{"logits"}, {"targets"}, {"grad"}, {"loss"}}};
    struct Attributes {
        float grad_scale = 1.0f;
    };
    static constexpr std::array<const char *, 1> attributes{"grad_scale"};

    static SoftmaxProblem check(const DeviceInfo &info, const Layouts<CrossEntropyOp> &t,
                                const Attributes &attributes) {
        const TensorLayout &logits = *t[0], &targets = *t[1], &grad = *t[2], &loss = *t[3];
        require_train_unit(info, name);
        const DType x_type = require_float_dense(name, "logits", logits);
        require_fp32_dense(name, "targets", targets);
        const DType out_type = require_float_dense(name, "grad", grad);
        require_fp32_dense(name, "loss", loss);
        require_same_shape(name, logits, "targets", targets);
        require_same_shape(name, logits, "grad", grad);
        const std::uint64_t cols = logits.size(logits.rank() - 1);
        const std::uint64_t rows = logits.element_count() / cols;
        if (loss.element_count() != rows)
            refuse(name, "loss " + loss.describe() + " must hold one element per row of " +
                             logits.describe());
        return {.kind = SoftmaxKind::CrossEntropy,
                .rows = dim32(name, rows, logits),
                .cols = dim32(name, cols, logits),
                .grad_scale = attributes.grad_scale,
                .x_type = x_type,
                .out_type = out_type};
    }
};

} // namespace

} // namespace detail

TPURT_KERNEL(detail::SoftmaxKernel);
TPURT_REGISTER_OP(softmax_op, PlainSoftmaxOp);
TPURT_REGISTER_OP(log_softmax_op, LogSoftmaxOp);
TPURT_REGISTER_OP(softmax_cross_entropy_op, CrossEntropyOp);

using detail::CrossEntropyOp;
using detail::LogSoftmaxOp;
using detail::PlainSoftmaxOp;

OpLaunch prepare_softmax(Device &device, const Tensor &x, const Tensor &out) {
    return detail::prepare<PlainSoftmaxOp>(device, {&x, &out});
}
MatmulStats softmax(Device &device, const Tensor &x, Tensor &out,
                    std::chrono::nanoseconds timeout) {
    return detail::run<PlainSoftmaxOp>(device, {&x, &out}, {}, timeout);
}
void softmax(Stream &stream, const Tensor &x, const Tensor &out) {
    detail::enqueue<PlainSoftmaxOp>(stream, {&x, &out});
}

OpLaunch prepare_log_softmax(Device &device, const Tensor &x, const Tensor &out) {
    return detail::prepare<LogSoftmaxOp>(device, {&x, &out});
}
MatmulStats log_softmax(Device &device, const Tensor &x, Tensor &out,
                        std::chrono::nanoseconds timeout) {
    return detail::run<LogSoftmaxOp>(device, {&x, &out}, {}, timeout);
}
void log_softmax(Stream &stream, const Tensor &x, const Tensor &out) {
    detail::enqueue<LogSoftmaxOp>(stream, {&x, &out});
}

OpLaunch prepare_softmax_cross_entropy(Device &device, const Tensor &logits, const Tensor &targets,
                                       const Tensor &loss, const Tensor &grad, float grad_scale) {
    return detail::prepare<CrossEntropyOp>(device, {&logits, &targets, &grad, &loss}, {grad_scale});
}
MatmulStats softmax_cross_entropy(Device &device, const Tensor &logits, const Tensor &targets,
                                  Tensor &loss, Tensor &grad, float grad_scale,
                                  std::chrono::nanoseconds timeout) {
    return detail::run<CrossEntropyOp>(device, {&logits, &targets, &grad, &loss}, {grad_scale},
                                       timeout);
}
void softmax_cross_entropy(Stream &stream, const Tensor &logits, const Tensor &targets,
                           const Tensor &loss, const Tensor &grad, float grad_scale) {
    detail::enqueue<CrossEntropyOp>(stream, {&logits, &targets, &grad, &loss}, {grad_scale});
}

} // namespace tpurt
