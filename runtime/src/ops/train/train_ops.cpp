// SPDX-License-Identifier: MIT
// train_ops.cpp - checks the training ops' tensor operands and prepares their launches (see
// train_ops.hpp): the executables of train_executables.hpp, and the backward matmuls and column
// sums as sequences of existing tensor ops (a TRANSPOSE into a scratch tensor first). Their
// blocking and stream forms are in train_op_forms.cpp.
#include "tpurt/ops/train_ops.hpp"

#include "memory/scratch.hpp"
#include "ops/train/train_checks.hpp"
#include "ops/train/train_executables.hpp"
#include "tpurt/error.hpp"
#include "tpurt/ops/tensor_ops.hpp"

#include <string>

namespace tpurt {

namespace {

using detail::dim32;
using detail::refuse;
using detail::require_float_dense;
using detail::require_fp32_dense;
using detail::require_same_shape;
using detail::require_train_unit;

OpLaunch prepare_softmax_kind(Device &device, SoftmaxKind kind, const Tensor &x,
                              const Tensor &out) {
    const std::string op = softmax_kind_name(kind);
    require_train_unit(device.info(), op);
    const DType x_type = require_float_dense(op, "x", x);
    const DType out_type = require_float_dense(op, "out", out);
    require_same_shape(op, x, "out", out);
    const std::uint64_t cols = x.size(x.rank() - 1);
    const SoftmaxProblem problem{.kind = kind,
                                 .rows = dim32(op, x.element_count() / cols, x),
                                 .cols = dim32(op, cols, x),
                                 .x_type = x_type,
                                 .out_type = out_type};
    return launch_of(softmax_executable(device, problem), {&x, &out});
}

} // namespace

OpLaunch prepare_softmax(Device &device, const Tensor &x, const Tensor &out) {
    return prepare_softmax_kind(device, SoftmaxKind::Softmax, x, out);
}

OpLaunch prepare_log_softmax(Device &device, const Tensor &x, const Tensor &out) {
    return prepare_softmax_kind(device, SoftmaxKind::LogSoftmax, x, out);
}

OpLaunch prepare_softmax_cross_entropy(Device &device, const Tensor &logits, const Tensor &targets,
                                       const Tensor &loss, const Tensor &grad, float grad_scale) {
    const std::string op = "softmax_cross_entropy";
    require_train_unit(device.info(), op);
    const DType x_type = require_float_dense(op, "logits", logits);
    require_fp32_dense(op, "targets", targets);
    const DType out_type = require_float_dense(op, "grad", grad);
    require_fp32_dense(op, "loss", loss);
    require_same_shape(op, logits, "targets", targets);
    require_same_shape(op, logits, "grad", grad);
    const std::uint64_t cols = logits.size(logits.rank() - 1);
    const std::uint64_t rows = logits.element_count() / cols;
    if (loss.element_count() != rows)
        refuse(op, "loss " + loss.layout().describe() + " must hold one element per row of " +
                       logits.layout().describe());
    const SoftmaxProblem problem{.kind = SoftmaxKind::CrossEntropy,
                                 .rows = dim32(op, rows, logits),
                                 .cols = dim32(op, cols, logits),
                                 .grad_scale = grad_scale,
                                 .x_type = x_type,
                                 .out_type = out_type};
    return launch_of(softmax_executable(device, problem), {&logits, &targets, &grad, &loss});
}

OpLaunch prepare_activation_grad(Device &device, GradFunction function, const Tensor &saved,
                                 const Tensor &dy, const Tensor &dx) {
    const std::string op = grad_function_name(function);
    require_train_unit(device.info(), op);
    const DType x_type = require_float_dense(op, "saved", saved);
    const DType dy_type = require_float_dense(op, "dy", dy);
    const DType dx_type = require_float_dense(op, "dx", dx);
    require_same_shape(op, saved, "dy", dy);
    require_same_shape(op, saved, "dx", dx);
    const ActivationGradProblem problem{.function = function,
                                        .elements = saved.element_count(),
                                        .x_type = x_type,
                                        .dy_type = dy_type,
                                        .dx_type = dx_type};
    return launch_of(activation_grad_executable(device, problem), {&saved, &dy, &dx});
}

namespace {

OpLaunch prepare_optimizer(Device &device, OptimizerKind kind, const Tensor &w, const Tensor &g,
                           const Tensor &m, const Tensor *v, const Tensor &hp,
                           const Tensor *w_bf16) {
    const std::string op = optimizer_name(kind);
    require_train_unit(device.info(), op);
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
        refuse(op, "hp " + hp.layout().describe() + " must hold " +
                       std::to_string(optimizer_hp_count) + " fp32 hyperparameters");
    if (w_bf16 && (w_bf16->dtype() != DType::Bf16 || !w_bf16->is_contiguous() ||
                   w_bf16->element_count() != w.element_count()))
        refuse(op, "w_bf16 " + w_bf16->layout().describe() +
                       " must be a densely packed bf16 tensor of w's element count");
    const OptimizerProblem problem{
        .kind = kind, .elements = w.element_count(), .bf16_copy = w_bf16 != nullptr};
    return launch_of(optimizer_executable(device, problem), {&w, &g, &m, &hp, v, w_bf16});
}

} // namespace

OpLaunch prepare_sgd_momentum_step(Device &device, const Tensor &w, const Tensor &g,
                                   const Tensor &momentum, const Tensor &hp, const Tensor *w_bf16) {
    return prepare_optimizer(device, OptimizerKind::SgdMomentum, w, g, momentum, nullptr, hp,
                             w_bf16);
}

OpLaunch prepare_adam_step(Device &device, const Tensor &w, const Tensor &g, const Tensor &m,
                           const Tensor &v, const Tensor &hp, const Tensor *w_bf16) {
    return prepare_optimizer(device, OptimizerKind::Adam, w, g, m, &v, hp, w_bf16);
}

OpLaunch prepare_divide(Device &device, const Tensor &a, const Tensor &b, const Tensor &out) {
    if (!(device.info().caps & TPU_CAP_VPU_TRAIN))
        throw Error(ErrorCode::Unsupported, "divide needs a card with the spec 1.4 VECTOR DIV");
    return prepare_elementwise(device, VectorOp::Div, a, b, out);
}

namespace {

// A contiguous scratch tensor for matrix a transposed by the card's TRANSPOSE (which writes all
// of it); the launches that write and read it hold its buffer until their jobs have ended.
Tensor transposed_scratch(Device &device, const Tensor &a, const char *op) {
    if (a.rank() != 2)
        refuse(op, a.layout().describe() + " is not a matrix");
    return detail::scratch_tensor(device, a.dtype(), {a.size(1), a.size(0)});
}

// The operands of a product with one transposed operand, checked under the op's own name before
// its parts (TRANSPOSE into a scratch tensor, then matmul) check theirs on the scratch tensor,
// which the caller never saw: matrices of one matrix-unit dtype and C of its accumulator type,
// shapes that chain.
void require_transposed_product(const std::string &op, const Tensor &a, bool a_transposed,
                                const Tensor &b, bool b_transposed, const Tensor &c) {
    for (auto [name, t] : {std::pair{"a", &a}, {"b", &b}, {"c", &c}})
        if (t->rank() != 2)
            refuse(op, std::string(name) + " " + t->layout().describe() + " is not a matrix");
    const DType type = a.dtype();
    if (!is_matmul_input(type) || b.dtype() != type || c.dtype() != accumulator_type(type))
        refuse(op, "a " + a.layout().describe() + ", b " + b.layout().describe() + " and c " +
                       c.layout().describe() +
                       ": a and b must both be int8, bf16 or fp32, c int32 for int8 and fp32 "
                       "otherwise");
    const std::size_t m = a.size(a_transposed ? 1 : 0), k = a.size(a_transposed ? 0 : 1);
    const std::size_t kb = b.size(b_transposed ? 1 : 0), n = b.size(b_transposed ? 0 : 1);
    if (k != kb || c.size(0) != m || c.size(1) != n)
        refuse(op, std::string("shapes do not chain: a") + (a_transposed ? "^T " : " ") +
                       a.layout().describe() + " x b" + (b_transposed ? "^T " : " ") +
                       b.layout().describe() + " -> c " + c.layout().describe() + " (c must be [" +
                       std::to_string(m) + ", " + std::to_string(n) + "])");
}

} // namespace

OpSequence prepare_matmul_tn(Device &device, const Tensor &a, const Tensor &b, const Tensor &c) {
    require_transposed_product("matmul_tn", a, true, b, false, c);
    const Tensor at = transposed_scratch(device, a, "matmul_tn");
    return {{prepare_transpose(device, a, at), prepare_matmul(device, at, b, c)}};
}

OpSequence prepare_matmul_nt(Device &device, const Tensor &a, const Tensor &b, const Tensor &c) {
    require_transposed_product("matmul_nt", a, false, b, true, c);
    const Tensor bt = transposed_scratch(device, b, "matmul_nt");
    return {{prepare_transpose(device, b, bt), prepare_matmul(device, a, bt, c)}};
}

OpSequence prepare_column_sums(Device &device, const Tensor &a, const Tensor &out) {
    const std::string op = "column_sums";
    if (a.rank() != 2)
        refuse(op, "a " + a.layout().describe() + " is not a matrix");
    const DType out_type = reduce_result_type(a.dtype(), ReduceOp::Sum);
    if (out.dtype() != out_type || out.element_count() != a.size(1) || !out.is_contiguous())
        refuse(op, "out " + out.layout().describe() + " must be a densely packed " +
                       dtype_name(out_type) + " tensor of " + std::to_string(a.size(1)) +
                       " elements, one per column of a " + a.layout().describe());
    const Tensor at = transposed_scratch(device, a, "column_sums");
    return {
        {prepare_transpose(device, a, at), prepare_reduce_rows(device, ReduceOp::Sum, at, out)}};
}

} // namespace tpurt
