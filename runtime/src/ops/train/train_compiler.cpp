// SPDX-License-Identifier: MIT
// train_compiler.cpp - softmax / cross-entropy, activation gradients and optimizer updates as
// card programs (see train_compiler.hpp).
#include "tpurt/codegen/train_compiler.hpp"

#include "codegen/isa_limits.hpp"
#include "codegen/program_splitter.hpp"
#include "codegen/train_block.hpp"
#include "tpurt/error.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace tpurt {

using namespace train_detail;

namespace {

// GELU's constants as the card's GELU uses them (docs/hardware.md): v = k (x + a x^3).
constexpr float gelu_k = 1.59576912160573071f;
constexpr float gelu_a = 0.044715f;
constexpr float gelu_3ak = static_cast<float>(3.0 * 0.044715 * 1.59576912160573071);

// Elements of a chunk needing `ub_per_element` bytes each in the unified buffer (after the
// constants) and 4 in the accumulators.
std::uint64_t chunk_elements(std::uint64_t total, std::uint64_t ub_per_element,
                             const ArrayLimits &limits) {
    const std::uint64_t ub = limits.ub_bytes > data_ub ? limits.ub_bytes - data_ub : 0;
    return std::min<std::uint64_t>({total, max_dim, ub / ub_per_element, limits.acc_bytes / 4});
}

} // namespace

const char *softmax_kind_name(SoftmaxKind kind) {
    switch (kind) {
    case SoftmaxKind::Softmax:
        return "softmax";
    case SoftmaxKind::LogSoftmax:
        return "log_softmax";
    case SoftmaxKind::CrossEntropy:
        return "softmax_cross_entropy";
    }
    return "?";
}

const char *grad_function_name(GradFunction function) {
    switch (function) {
    case GradFunction::Relu:
        return "relu_grad";
    case GradFunction::Sigmoid:
        return "sigmoid_grad";
    case GradFunction::Tanh:
        return "tanh_grad";
    case GradFunction::Gelu:
        return "gelu_grad";
    }
    return "?";
}

const char *optimizer_name(OptimizerKind kind) {
    return kind == OptimizerKind::Adam ? "adam" : "sgd_momentum";
}

std::array<float, optimizer_hp_count> sgd_hyperparameters(float lr, float momentum,
                                                          float weight_decay) {
    return {lr, momentum, weight_decay, 0, 0, 0, 0, 0};
}

std::array<float, optimizer_hp_count> adam_hyperparameters(float lr, float beta1, float beta2,
                                                           float eps, float weight_decay,
                                                           std::uint64_t step) {
    if (step == 0)
        throw Error(ErrorCode::InvalidArgument, "adam: steps count from 1");
    const double c1 = lr / (1.0 - std::pow(double(beta1), double(step)));
    const double c2 = 1.0 / std::sqrt(1.0 - std::pow(double(beta2), double(step)));
    return {static_cast<float>(c1), beta1, 1.0f - beta1, beta2, 1.0f - beta2,
            static_cast<float>(c2), eps,   weight_decay};
}

std::vector<Program> compile_softmax(const SoftmaxProblem &p, const ArrayLimits &limits,
                                     std::size_t max_program_bytes) {
    const std::string name = softmax_kind_name(p.kind);
    if (p.rows == 0 || p.cols == 0)
        throw Error(ErrorCode::InvalidArgument, name + " of " + std::to_string(p.rows) + " x " +
                                                    std::to_string(p.cols) +
                                                    ": dimensions must be non-zero");
    const std::uint32_t x_size = float_operand(name, "x", p.x_type),
                        out_size = float_operand(name, "out", p.out_type);
    const bool ce = p.kind == SoftmaxKind::CrossEntropy;
    // Per row: x, the work copy and (cross-entropy) the targets, cols each; four row values;
    // the staging of bf16 operands.
    const std::uint64_t fp32_row = (ce ? 3u : 2u) * 4ull * p.cols + 16;
    const std::uint64_t per_row =
        fp32_row + std::uint64_t{staging_bytes({p.x_type, p.out_type})} * p.cols;
    const std::uint64_t ub = limits.ub_bytes > data_ub ? limits.ub_bytes - data_ub : 0;
    const std::uint64_t tile_rows = std::min<std::uint64_t>(
        {p.rows, max_dim / p.cols, ub / per_row, limits.acc_bytes / 4 / p.cols});
    if (p.cols > max_dim || tile_rows == 0)
        unsupported(name + " over rows of " + std::to_string(p.cols), limits);
    const Staging staging{.zeros = static_cast<std::uint32_t>(data_ub + fp32_row * tile_rows),
                          .capacity = static_cast<std::uint32_t>(tile_rows * p.cols)};
    ProgramSplitter programs(max_program_bytes, start_program());
    for (std::uint32_t r0 = 0; r0 < p.rows; r0 += static_cast<std::uint32_t>(tile_rows)) {
        const auto rows =
            static_cast<std::uint32_t>(std::min<std::uint64_t>(tile_rows, p.rows - r0));
        const std::uint32_t n = rows * p.cols, cols = p.cols;
        const std::uint32_t x = data_ub, w = x + 4 * n, t = w + 4 * n;
        const std::uint32_t mx = (ce ? t + 4 * n : t), s = mx + 4 * rows, l = s + 4 * rows,
                            loss = l + 4 * rows;
        const std::uint64_t offset = std::uint64_t{r0} * cols;
        Block b(limits.mxu_cols);
        b.load_typed(p.x_type, p.x_addr + offset * x_size, x, rows, cols, staging);
        b.reduce(ReduceOp::Max, x, mx, rows, cols);
        b.vec(VectorOp::Sub, x, mx, w, rows, cols, Bcast::Column); // w = x - max
        b.apply(Activation::Exp, 1.0f, w, x, n);                   // x = e
        b.reduce(ReduceOp::Sum, x, s, rows, cols);                 // s
        if (p.kind == SoftmaxKind::Softmax) {
            b.vec(VectorOp::Div, x, s, x, rows, cols, Bcast::Column);
            b.store_typed(p.out_type, p.out_addr + offset * out_size, x, rows, cols, staging);
            programs.add(b.finish());
            continue;
        }
        b.apply(Activation::Log, 1.0f, s, l, rows);
        b.vec(VectorOp::Sub, w, l, w, rows, cols, Bcast::Column); // w = log-softmax
        if (p.kind == SoftmaxKind::LogSoftmax) {
            b.store_typed(p.out_type, p.out_addr + offset * out_size, w, rows, cols, staging);
            programs.add(b.finish());
            continue;
        }
        b.vec(VectorOp::Div, x, s, x, rows, cols, Bcast::Column); // x = softmax
        b.load(p.target_addr + offset * 4, t, rows, cols);
        b.vec(VectorOp::Mul, w, t, w, rows, cols);
        b.reduce(ReduceOp::Sum, w, loss, rows, cols);
        b.apply(Activation::None, -1.0f, loss, loss, rows);
        b.store(p.loss_addr + std::uint64_t{r0} * 4, loss, 1, rows);
        b.vec(VectorOp::Sub, x, t, x, rows, cols);
        // The gradient leaves ACTIVATE in its dtype: bf16 is the fp32 result rounded.
        const std::uint32_t g = p.out_type == DType::Fp32 ? x : staging.row();
        b.apply(Activation::None, p.grad_scale, x, g, n, p.out_type);
        b.store(p.out_addr + offset * out_size, g, rows, cols, p.out_type);
        programs.add(b.finish());
    }
    return programs.finish();
}

std::vector<Program> compile_activation_grad(const ActivationGradProblem &p,
                                             const ArrayLimits &limits,
                                             std::size_t max_program_bytes) {
    const std::string name = grad_function_name(p.function);
    if (p.elements == 0)
        throw Error(ErrorCode::InvalidArgument, name + ": at least one element is needed");
    const std::uint32_t x_size = float_operand(name, "saved", p.x_type),
                        dy_size = float_operand(name, "dy", p.dy_type),
                        dx_size = float_operand(name, "dx", p.dx_type);
    const std::uint32_t staged = staging_bytes({p.x_type, p.dy_type, p.dx_type});
    const std::uint64_t chunk = chunk_elements(p.elements, 6 * 4 + staged, limits);
    if (chunk == 0)
        unsupported(name, limits);
    // After the six fp32 regions of the largest chunk (bf16 operands only).
    const Staging staging{.zeros = static_cast<std::uint32_t>(data_ub + 6 * 4 * chunk),
                          .capacity = static_cast<std::uint32_t>(chunk)};
    ProgramSplitter programs(max_program_bytes, start_program());
    for (std::uint64_t e0 = 0; e0 < p.elements; e0 += chunk) {
        const auto n = static_cast<std::uint32_t>(std::min(chunk, p.elements - e0));
        const std::uint32_t x = data_ub, d = x + 4 * n, t = d + 4 * n, q = t + 4 * n, s = q + 4 * n,
                            v = s + 4 * n;
        Block b(limits.mxu_cols);
        b.load_typed(p.x_type, p.x_addr + e0 * x_size, x, 1, n, staging);
        b.load_typed(p.dy_type, p.dy_addr + e0 * dy_size, d, 1, n, staging);
        switch (p.function) {
        case GradFunction::Relu:
            b.vec(VectorOp::Gate, x, d, x, 1, n);
            break;
        case GradFunction::Sigmoid:
            b.vec(VectorOp::Mul, x, x, t, 1, n);
            b.vec(VectorOp::Sub, x, t, t, 1, n);
            b.vec(VectorOp::Mul, t, d, x, 1, n);
            break;
        case GradFunction::Tanh:
            b.vec(VectorOp::Mul, x, x, t, 1, n);
            b.vec(VectorOp::Mul, t, d, t, 1, n);
            b.vec(VectorOp::Sub, d, t, x, 1, n);
            break;
        case GradFunction::Gelu:
            b.vec(VectorOp::Mul, x, x, t, 1, n);                       // x^2
            b.vec(VectorOp::Mul, t, x, v, 1, n);                       // x^3
            b.apply(Activation::None, gelu_a, v, v, n);                // a x^3
            b.vec(VectorOp::Add, x, v, v, 1, n);                       // x + a x^3
            b.apply(Activation::Sigmoid, gelu_k, v, s, n);             // s = sigmoid(k (x + a x^3))
            b.apply(Activation::None, gelu_3ak, t, t, n);              // 3ak x^2
            b.constant(gelu_k, const_ub);                              //
            b.vec(VectorOp::Add, t, const_ub, t, 1, n, Bcast::Scalar); // v' = k + 3ak x^2
            b.vec(VectorOp::Mul, s, s, q, 1, n);
            b.vec(VectorOp::Sub, s, q, q, 1, n); // s (1 - s) as s - s s
            b.vec(VectorOp::Mul, q, x, q, 1, n);
            b.vec(VectorOp::Mul, q, t, q, 1, n);
            b.vec(VectorOp::Add, s, q, q, 1, n);
            b.vec(VectorOp::Mul, q, d, x, 1, n);
            break;
        }
        b.store_typed(p.dx_type, p.dx_addr + e0 * dx_size, x, 1, n, staging);
        programs.add(b.finish());
    }
    return programs.finish();
}

std::vector<Program> compile_optimizer(const OptimizerProblem &p, const ArrayLimits &limits,
                                       std::size_t max_program_bytes) {
    const std::string name = optimizer_name(p.kind);
    if (p.elements == 0)
        throw Error(ErrorCode::InvalidArgument, name + ": at least one element is needed");
    // Adam's square root and the bf16 copy through apply_finite(): the identity tile at the top
    // of the unified buffer.
    const std::uint32_t side = std::min({32u, limits.mxu_rows, limits.mxu_cols});
    const std::uint32_t identity_bytes = 4 * side * side;
    ArrayLimits below = limits;
    below.ub_bytes = limits.ub_bytes > identity_bytes ? limits.ub_bytes - identity_bytes : 0;
    const std::uint32_t identity = below.ub_bytes;
    const std::uint64_t chunk = chunk_elements(p.elements, 6 * 4 + 2, below);
    if (chunk == 0)
        unsupported(name, limits);
    const bool adam = p.kind == OptimizerKind::Adam;
    // The hyperparameters at const_ub, in the order of OptimizerProblem's comment.
    const auto hp = [](std::uint32_t i) { return const_ub + 4 * i; };
    // Chunks take two sets of buffers in turn where both fit, so that the next chunk's loads
    // have bytes of their own and can run while this one computes (the graphs' schedule moves
    // them there).
    const std::uint64_t set_bytes = (26 * chunk + 63) / 64 * 64;
    const std::uint64_t sets = data_ub + 2 * set_bytes <= below.ub_bytes ? 2 : 1;
    ProgramSplitter programs(max_program_bytes, start_program());
    for (std::uint64_t e0 = 0; e0 < p.elements; e0 += chunk) {
        const auto n = static_cast<std::uint32_t>(std::min(chunk, p.elements - e0));
        const auto w = static_cast<std::uint32_t>(data_ub + e0 / chunk % sets * set_bytes);
        const std::uint32_t g = w + 4 * n, m = g + 4 * n, v = m + 4 * n, t = v + 4 * n,
                            u = t + 4 * n, h = u + 4 * n;
        const std::uint64_t at = e0 * 4;
        Block b;
        b.load(p.hp_addr, hp(0), 1, optimizer_hp_count);
        if (adam || p.bf16_copy)
            b.make_identity(identity, side);
        b.load(p.w_addr + at, w, 1, n);
        b.load(p.g_addr + at, g, 1, n);
        b.load(p.m_addr + at, m, 1, n);
        const auto by = [&](std::uint32_t a, std::uint32_t i, std::uint32_t dst) {
            b.vec(VectorOp::Mul, a, hp(i), dst, 1, n, Bcast::Scalar);
        };
        const std::uint32_t wd = adam ? 7 : 2;
        by(w, wd, t);
        b.vec(VectorOp::Add, g, t, g, 1, n); // g' = g + wd w
        if (!adam) {
            by(m, 1, m);
            b.vec(VectorOp::Add, m, g, m, 1, n); // m = momentum m + g'
            by(m, 0, t);
            b.vec(VectorOp::Sub, w, t, w, 1, n); // w = w - lr m
        } else {
            b.load(p.v_addr + at, v, 1, n);
            by(g, 2, t);
            by(m, 1, m);
            b.vec(VectorOp::Add, m, t, m, 1, n); // m = b1 m + (1 - b1) g'
            b.vec(VectorOp::Mul, g, g, t, 1, n);
            by(t, 4, t);
            by(v, 3, v);
            b.vec(VectorOp::Add, v, t, v, 1, n); // v = b2 v + (1 - b2) g' g'
            b.apply_finite(Activation::Sqrt, 1.0f, v, t, n, identity, side);
            by(t, 5, t);
            b.vec(VectorOp::Add, t, hp(6), t, 1, n, Bcast::Scalar); // sqrt(v) c2 + eps
            b.vec(VectorOp::Div, m, t, u, 1, n);
            by(u, 0, u);
            b.vec(VectorOp::Sub, w, u, w, 1, n); // w = w - c1 m / (sqrt(v) c2 + eps)
            b.store(p.v_addr + at, v, 1, n);
        }
        b.store(p.w_addr + at, w, 1, n);
        b.store(p.m_addr + at, m, 1, n);
        if (p.bf16_copy) {
            b.apply_finite(Activation::None, 1.0f, w, h, n, identity, side, DType::Bf16);
            b.store(p.bf16_addr + e0 * 2, h, 1, n, DType::Bf16);
        }
        programs.add(b.finish());
    }
    return programs.finish();
}

} // namespace tpurt
