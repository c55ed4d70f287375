// SPDX-License-Identifier: MIT
// train_op_forms.cpp - the blocking and the stream form of the training ops of train_ops.cpp,
// one line each on top of their prepare_<op>() (train_ops.hpp): run the launch (or the sequence
// of launches) and wait, or queue it.
#include "tpurt/ops/train_ops.hpp"

namespace tpurt {

MatmulStats softmax(Device &device, const Tensor &x, Tensor &out,
                    std::chrono::nanoseconds timeout) {
    return prepare_softmax(device, x, out).run(device, timeout);
}
void softmax(Stream &stream, const Tensor &x, const Tensor &out) {
    stream.enqueue(prepare_softmax(stream.device(), x, out));
}

MatmulStats log_softmax(Device &device, const Tensor &x, Tensor &out,
                        std::chrono::nanoseconds timeout) {
    return prepare_log_softmax(device, x, out).run(device, timeout);
}
void log_softmax(Stream &stream, const Tensor &x, const Tensor &out) {
    stream.enqueue(prepare_log_softmax(stream.device(), x, out));
}

MatmulStats softmax_cross_entropy(Device &device, const Tensor &logits, const Tensor &targets,
                                  Tensor &loss, Tensor &grad, float grad_scale,
                                  std::chrono::nanoseconds timeout) {
    return prepare_softmax_cross_entropy(device, logits, targets, loss, grad, grad_scale)
        .run(device, timeout);
}
void softmax_cross_entropy(Stream &stream, const Tensor &logits, const Tensor &targets,
                           const Tensor &loss, const Tensor &grad, float grad_scale) {
    stream.enqueue(
        prepare_softmax_cross_entropy(stream.device(), logits, targets, loss, grad, grad_scale));
}

MatmulStats activation_grad(Device &device, GradFunction function, const Tensor &saved,
                            const Tensor &dy, Tensor &dx, std::chrono::nanoseconds timeout) {
    return prepare_activation_grad(device, function, saved, dy, dx).run(device, timeout);
}
void activation_grad(Stream &stream, GradFunction function, const Tensor &saved, const Tensor &dy,
                     const Tensor &dx) {
    stream.enqueue(prepare_activation_grad(stream.device(), function, saved, dy, dx));
}

MatmulStats sgd_momentum_step(Device &device, Tensor &w, const Tensor &g, Tensor &momentum,
                              const Tensor &hp, Tensor *w_bf16, std::chrono::nanoseconds timeout) {
    return prepare_sgd_momentum_step(device, w, g, momentum, hp, w_bf16).run(device, timeout);
}
void sgd_momentum_step(Stream &stream, const Tensor &w, const Tensor &g, const Tensor &momentum,
                       const Tensor &hp, const Tensor *w_bf16) {
    stream.enqueue(prepare_sgd_momentum_step(stream.device(), w, g, momentum, hp, w_bf16));
}

MatmulStats adam_step(Device &device, Tensor &w, const Tensor &g, Tensor &m, Tensor &v,
                      const Tensor &hp, Tensor *w_bf16, std::chrono::nanoseconds timeout) {
    return prepare_adam_step(device, w, g, m, v, hp, w_bf16).run(device, timeout);
}
void adam_step(Stream &stream, const Tensor &w, const Tensor &g, const Tensor &m, const Tensor &v,
               const Tensor &hp, const Tensor *w_bf16) {
    stream.enqueue(prepare_adam_step(stream.device(), w, g, m, v, hp, w_bf16));
}

MatmulStats divide(Device &device, const Tensor &a, const Tensor &b, Tensor &out,
                   std::chrono::nanoseconds timeout) {
    return prepare_divide(device, a, b, out).run(device, timeout);
}
void divide(Stream &stream, const Tensor &a, const Tensor &b, const Tensor &out) {
    stream.enqueue(prepare_divide(stream.device(), a, b, out));
}

MatmulStats matmul_tn(Device &device, const Tensor &a, const Tensor &b, Tensor &c,
                      std::chrono::nanoseconds timeout) {
    return prepare_matmul_tn(device, a, b, c).run(device, timeout);
}
void matmul_tn(Stream &stream, const Tensor &a, const Tensor &b, const Tensor &c) {
    stream.enqueue(prepare_matmul_tn(stream.device(), a, b, c));
}

MatmulStats matmul_nt(Device &device, const Tensor &a, const Tensor &b, Tensor &c,
                      std::chrono::nanoseconds timeout) {
    return prepare_matmul_nt(device, a, b, c).run(device, timeout);
}
void matmul_nt(Stream &stream, const Tensor &a, const Tensor &b, const Tensor &c) {
    stream.enqueue(prepare_matmul_nt(stream.device(), a, b, c));
}

MatmulStats column_sums(Device &device, const Tensor &a, Tensor &out,
                        std::chrono::nanoseconds timeout) {
    return prepare_column_sums(device, a, out).run(device, timeout);
}
void column_sums(Stream &stream, const Tensor &a, const Tensor &out) {
    stream.enqueue(prepare_column_sums(stream.device(), a, out));
}

} // namespace tpurt
