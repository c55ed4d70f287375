// SPDX-License-Identifier: MIT
// train_ops.hpp - the ops of a training step on tensors, on the card: softmax, log-softmax and
// the fused softmax cross-entropy (per-row loss and gradient), activation gradients, SGD with
// momentum and Adam on fp32 master weights (with a bf16 copy for the next forward), elementwise
// division, and the matmuls of the backward pass (A^T B for weight gradients, A B^T for input
// gradients) and the bias gradient (column sums). The programs are train_compiler.hpp's (spec
// 1.4, TPU_CAP_VPU_TRAIN) and the existing matmul / transpose / reduce programs. Operands are
// densely packed and fp32 unless said otherwise.
//
// Mixed precision: where an operand below is "fp32 or bf16" each such operand takes its own
// dtype from its Tensor, and the job is the same one program. A bf16 input is widened exactly to
// fp32 on the card (subnormals and -0 kept), the computation is the fp32 op's, and a bf16 output
// is the fp32 result rounded to nearest even (overflow to infinity, -0 kept, NaN 0x7fc0): bit for
// bit the fp32 op on the widened inputs followed by the rounding. Other dtypes are refused with
// an Error (InvalidArgument) naming the op, the operand and its dtype.
#pragma once

#include "tpurt/device.hpp"
#include "tpurt/job.hpp"
#include "tpurt/matmul.hpp"
#include "tpurt/tensor.hpp"
#include "tpurt/tensor_ops.hpp"
#include "tpurt/train_compiler.hpp"

#include <chrono>

namespace tpurt {

// out = softmax (log_softmax) of x over its last dimension; x and out of one shape, each fp32
// or bf16.
MatmulStats softmax(Device &device, const Tensor &x, Tensor &out,
                    std::chrono::nanoseconds timeout = Job::default_timeout);
MatmulStats log_softmax(Device &device, const Tensor &x, Tensor &out,
                        std::chrono::nanoseconds timeout = Job::default_timeout);

// Cross-entropy of softmax(logits) against targets (probability rows, e.g. one-hot), over the
// last dimension: loss (one element per row) = -sum t log softmax(logits); grad (logits' shape)
// = grad_scale x (softmax(logits) - targets), the gradient of grad_scale x sum(loss); the
// mean's gradient with grad_scale = 1 / rows. logits and grad each fp32 or bf16 (a bf16 grad is
// the fp32 gradient rounded); targets and loss fp32.
MatmulStats softmax_cross_entropy(Device &device, const Tensor &logits, const Tensor &targets,
                                  Tensor &loss, Tensor &grad, float grad_scale,
                                  std::chrono::nanoseconds timeout = Job::default_timeout);

// dx = f'(.) dy for f = relu or gelu (`saved` is the forward input x) or sigmoid or tanh
// (`saved` is the forward output y); saved, dy and dx of one shape, each fp32 or bf16.
MatmulStats activation_grad(Device &device, GradFunction function, const Tensor &saved,
                            const Tensor &dy, Tensor &dx,
                            std::chrono::nanoseconds timeout = Job::default_timeout);

// One update of fp32 master weights w by gradient g, in place (w and the state tensors),
// hyperparameters hp = fp32[8] from sgd_hyperparameters / adam_hyperparameters (a tensor, so
// the learning rate or step changes without a new program); w_bf16 (optional, w's element
// count) receives the new weights as bf16.
MatmulStats sgd_momentum_step(Device &device, Tensor &w, const Tensor &g, Tensor &momentum,
                              const Tensor &hp, Tensor *w_bf16 = nullptr,
                              std::chrono::nanoseconds timeout = Job::default_timeout);
MatmulStats adam_step(Device &device, Tensor &w, const Tensor &g, Tensor &m, Tensor &v,
                      const Tensor &hp, Tensor *w_bf16 = nullptr,
                      std::chrono::nanoseconds timeout = Job::default_timeout);

// out = a / b elementwise (VECTOR DIV, spec 1.4): elementwise()'s shapes and dtypes; integer
// division truncates, x / 0 is 0.
MatmulStats divide(Device &device, const Tensor &a, const Tensor &b, Tensor &out);

// c[K, N] = a[M, K]^T b[M, N] (weight gradients) and c[M, N] = a[M, K] b[N, K]^T (input
// gradients): the transposed operand is copied by the card's TRANSPOSE into a scratch tensor,
// then matmul(); types as matmul's (int8 -> int32; bf16 or fp32, both alike, -> fp32). The
// results equal matmul() of the transposed matrix bit for bit, bf16's blocks of 32 included.
MatmulStats matmul_tn(Device &device, const Tensor &a, const Tensor &b, Tensor &c);
MatmulStats matmul_nt(Device &device, const Tensor &a, const Tensor &b, Tensor &c);

// out[c] = sum over r of a[r][c] (the bias gradient of a dense layer's output gradient a[M, N]):
// TRANSPOSE then REDUCE SUM, in ascending r, of the exactly widened values; out has N elements
// (fp32 for bf16 / fp32 a).
MatmulStats column_sums(Device &device, const Tensor &a, Tensor &out);

// Pooling gradients for k x k windows at stride k (train_compiler.hpp's PoolGradProblem):
// x, dx [N, H, W, C] and y, dy [N, H / k, W / k, C], densely packed; x and y fp32 or bf16 (one
// dtype for both, y the forward pool2d's output of x), dy and dx each fp32 or bf16.
MatmulStats max_pool2d_grad(Device &device, const Tensor &x, const Tensor &y, const Tensor &dy,
                            Tensor &dx, std::uint32_t window,
                            std::chrono::nanoseconds timeout = Job::default_timeout);
MatmulStats avg_pool2d_grad(Device &device, const Tensor &dy, Tensor &dx, std::uint32_t window,
                            std::chrono::nanoseconds timeout = Job::default_timeout);

// Gradients of conv2d() (stride 1, any zero padding up to the kernel size - 1), lowered to the
// card's TRANSPOSE, permute() and conv2d(): dx [N, H, W, C] = the convolution of dy
// [N, OH, OW, F] with the weights flipped in space and transposed in channels, padded by
// kernel - 1 - pad; dw [KH, KW, C, F] = the convolution of x as [C, H, W, N] (batch as
// channels) with dy as [OH, OW, N, F] (a kernel of OH x OW), padded by pad. Bf16 or fp32
// operands (both of one dtype), fp32 results, as conv2d's: equal to reference_conv2d() of those
// lowered operands (bf16's blocks of 32 over F, resp. N, included).
MatmulStats conv2d_input_grad(Device &device, const Tensor &dy, const Tensor &weights, Tensor &dx,
                              const Conv2dParams &params = {});
MatmulStats conv2d_weight_grad(Device &device, const Tensor &x, const Tensor &dy, Tensor &dw,
                               const Conv2dParams &params = {});

} // namespace tpurt
