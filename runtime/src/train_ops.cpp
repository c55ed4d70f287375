// SPDX-License-Identifier: MIT
// train_ops.cpp - checks the training ops' tensor operands and runs their executables (see
// train_ops.hpp); the backward matmuls and column sums compose the existing tensor ops.
#include "tpurt/train_ops.hpp"

#include "tpurt/error.hpp"
#include "tpurt/tensor_ops.hpp"
#include "train_checks.hpp"
#include "train_executables.hpp"

#include <array>
#include <string>

namespace tpurt {

namespace {

using detail::dim32;
using detail::refuse;
using detail::require_float_dense;
using detail::require_fp32_dense;
using detail::require_same_shape;
using detail::require_train_unit;

MatmulStats run_softmax(Device &device, SoftmaxKind kind, const Tensor &x, Tensor &out,
                        std::chrono::nanoseconds timeout) {
    const std::string op = softmax_kind_name(kind);
    require_train_unit(device, op);
    const DType x_type = require_float_dense(op, "x", x);
    const DType out_type = require_float_dense(op, "out", out);
    require_same_shape(op, x, "out", out);
    const std::uint64_t cols = x.size(x.rank() - 1);
    const SoftmaxProblem problem{.kind = kind,
                                 .rows = dim32(op, x.element_count() / cols, x),
                                 .cols = dim32(op, cols, x),
                                 .x_type = x_type,
                                 .out_type = out_type};
    const std::shared_ptr<const Executable> exe = softmax_executable(device, problem);
    const std::array<std::uint64_t, 2> bases{x.device_addr(), out.device_addr()};
    const std::array<const Buffer *, 2> buffers{&x.buffer(), &out.buffer()};
    return exe->run(device, bases, buffers, timeout);
}

} // namespace

MatmulStats softmax(Device &device, const Tensor &x, Tensor &out,
                    std::chrono::nanoseconds timeout) {
    return run_softmax(device, SoftmaxKind::Softmax, x, out, timeout);
}

MatmulStats log_softmax(Device &device, const Tensor &x, Tensor &out,
                        std::chrono::nanoseconds timeout) {
    return run_softmax(device, SoftmaxKind::LogSoftmax, x, out, timeout);
}

MatmulStats softmax_cross_entropy(Device &device, const Tensor &logits, const Tensor &targets,
                                  Tensor &loss, Tensor &grad, float grad_scale,
                                  std::chrono::nanoseconds timeout) {
    const std::string op = "softmax_cross_entropy";
    require_train_unit(device, op);
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
    const std::shared_ptr<const Executable> exe = softmax_executable(device, problem);
    const std::array<std::uint64_t, 4> bases{logits.device_addr(), targets.device_addr(),
                                             grad.device_addr(), loss.device_addr()};
    const std::array<const Buffer *, 4> buffers{&logits.buffer(), &targets.buffer(), &grad.buffer(),
                                                &loss.buffer()};
    return exe->run(device, bases, buffers, timeout);
}

MatmulStats activation_grad(Device &device, GradFunction function, const Tensor &saved,
                            const Tensor &dy, Tensor &dx, std::chrono::nanoseconds timeout) {
    const std::string op = grad_function_name(function);
    require_train_unit(device, op);
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
    const std::shared_ptr<const Executable> exe = activation_grad_executable(device, problem);
    const std::array<std::uint64_t, 3> bases{saved.device_addr(), dy.device_addr(),
                                             dx.device_addr()};
    const std::array<const Buffer *, 3> buffers{&saved.buffer(), &dy.buffer(), &dx.buffer()};
    return exe->run(device, bases, buffers, timeout);
}

namespace {

MatmulStats run_optimizer(Device &device, OptimizerKind kind, Tensor &w, const Tensor &g, Tensor &m,
                          Tensor *v, const Tensor &hp, Tensor *w_bf16,
                          std::chrono::nanoseconds timeout) {
    const std::string op = optimizer_name(kind);
    require_train_unit(device, op);
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
    const std::shared_ptr<const Executable> exe = optimizer_executable(device, problem);
    std::vector<std::uint64_t> bases{w.device_addr(), g.device_addr(), m.device_addr(),
                                     hp.device_addr()};
    std::vector<const Buffer *> buffers{&w.buffer(), &g.buffer(), &m.buffer(), &hp.buffer()};
    if (v) {
        bases.push_back(v->device_addr());
        buffers.push_back(&v->buffer());
    }
    if (w_bf16) {
        bases.push_back(w_bf16->device_addr());
        buffers.push_back(&w_bf16->buffer());
    }
    return exe->run(device, bases, buffers, timeout);
}

} // namespace

MatmulStats sgd_momentum_step(Device &device, Tensor &w, const Tensor &g, Tensor &momentum,
                              const Tensor &hp, Tensor *w_bf16, std::chrono::nanoseconds timeout) {
    return run_optimizer(device, OptimizerKind::SgdMomentum, w, g, momentum, nullptr, hp, w_bf16,
                         timeout);
}

MatmulStats adam_step(Device &device, Tensor &w, const Tensor &g, Tensor &m, Tensor &v,
                      const Tensor &hp, Tensor *w_bf16, std::chrono::nanoseconds timeout) {
    return run_optimizer(device, OptimizerKind::Adam, w, g, m, &v, hp, w_bf16, timeout);
}

MatmulStats divide(Device &device, const Tensor &a, const Tensor &b, Tensor &out) {
    if (!(device.info().caps & TPU_CAP_VPU_TRAIN))
        throw Error(ErrorCode::Unsupported, "divide needs a card with the spec 1.4 VECTOR DIV");
    return elementwise(device, VectorOp::Div, a, b, out);
}

namespace {

// A contiguous copy of matrix a transposed, made by the card.
Tensor transposed_copy(Device &device, const Tensor &a, MatmulStats &stats, const char *op) {
    if (a.rank() != 2)
        refuse(op, a.layout().describe() + " is not a matrix");
    Tensor t = Tensor::empty(device, a.dtype(), {a.size(1), a.size(0)});
    const MatmulStats s = transpose(device, a, t);
    stats += s;
    stats.jobs += s.jobs;
    return t;
}

MatmulStats add_stats(MatmulStats total, const MatmulStats &s) {
    total += s;
    total.jobs += s.jobs;
    return total;
}

} // namespace

MatmulStats matmul_tn(Device &device, const Tensor &a, const Tensor &b, Tensor &c) {
    MatmulStats stats;
    const Tensor at = transposed_copy(device, a, stats, "matmul_tn");
    return add_stats(stats, matmul(device, at, b, c));
}

MatmulStats matmul_nt(Device &device, const Tensor &a, const Tensor &b, Tensor &c) {
    MatmulStats stats;
    const Tensor bt = transposed_copy(device, b, stats, "matmul_nt");
    return add_stats(stats, matmul(device, a, bt, c));
}

MatmulStats column_sums(Device &device, const Tensor &a, Tensor &out) {
    MatmulStats stats;
    const Tensor at = transposed_copy(device, a, stats, "column_sums");
    return add_stats(stats, reduce_rows(device, ReduceOp::Sum, at, out));
}

} // namespace tpurt
