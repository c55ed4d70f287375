// SPDX-License-Identifier: MIT
// train_ops.hpp - the ops of a training step on tensors, on the card: softmax, log-softmax and
// the fused softmax cross-entropy (per-row loss and gradient), activation gradients, SGD with
// momentum and Adam on fp32 master weights (with a bf16 copy for the next forward), elementwise
// division, the matmuls of the backward pass (A^T B for weight gradients, A B^T for input
// gradients), the bias gradient (column sums), and the gradients of pooling (any windows and
// strides) and of convolutions (any strides, padding and dilation). The programs are
// train_compiler.hpp's (spec 1.4, TPU_CAP_VPU_TRAIN), conv_grad_compiler.hpp's and the existing
// matmul / transpose / reduce programs. Operands are densely packed and fp32 unless said
// otherwise.
//
// Mixed precision: where an operand below is "fp32 or bf16" each such operand takes its own
// dtype from its Tensor, and the job is the same one program. A bf16 input is widened exactly to
// fp32 on the card (subnormals and -0 kept), the computation is the fp32 op's, and a bf16 output
// is the fp32 result rounded to nearest even (overflow to infinity, -0 kept, NaN 0x7fc0): bit for
// bit the fp32 op on the widened inputs followed by the rounding. Other dtypes are refused with
// an Error (InvalidArgument) naming the op, the operand and its dtype.
#pragma once

#include "tpurt/card/job.hpp"
#include "tpurt/card/launch.hpp"
#include "tpurt/codegen/train_compiler.hpp"
#include "tpurt/device.hpp"
#include "tpurt/ops/matmul.hpp"
#include "tpurt/ops/tensor_ops.hpp"
#include "tpurt/stream.hpp"
#include "tpurt/tensor.hpp"

#include <chrono>

namespace tpurt {

// Every op below has three forms, as tensor_ops.hpp's: prepare_<op>() checks the operands and
// fetches the executable (operand errors are thrown here, naming the op), the blocking form
// runs it and waits, and the Stream form queues it and returns at once (its operands, and the
// scratch tensors of the ops that run several executables, stay alive until its jobs end; a job
// error is thrown by the stream's next synchronize() naming the executable that failed).

// out = softmax (log_softmax) of x over its last dimension; x and out of one shape, each fp32
// or bf16.
OpLaunch prepare_softmax(Device &device, const Tensor &x, const Tensor &out);
MatmulStats softmax(Device &device, const Tensor &x, Tensor &out,
                    std::chrono::nanoseconds timeout = Job::default_timeout);
void softmax(Stream &stream, const Tensor &x, const Tensor &out);
OpLaunch prepare_log_softmax(Device &device, const Tensor &x, const Tensor &out);
MatmulStats log_softmax(Device &device, const Tensor &x, Tensor &out,
                        std::chrono::nanoseconds timeout = Job::default_timeout);
void log_softmax(Stream &stream, const Tensor &x, const Tensor &out);

// Cross-entropy of softmax(logits) against targets (probability rows, e.g. one-hot), over the
// last dimension: loss (one element per row) = -sum t log softmax(logits); grad (logits' shape)
// = grad_scale x (softmax(logits) - targets), the gradient of grad_scale x sum(loss); the
// mean's gradient with grad_scale = 1 / rows. logits and grad each fp32 or bf16 (a bf16 grad is
// the fp32 gradient rounded); targets and loss fp32.
OpLaunch prepare_softmax_cross_entropy(Device &device, const Tensor &logits, const Tensor &targets,
                                       const Tensor &loss, const Tensor &grad, float grad_scale);
MatmulStats softmax_cross_entropy(Device &device, const Tensor &logits, const Tensor &targets,
                                  Tensor &loss, Tensor &grad, float grad_scale,
                                  std::chrono::nanoseconds timeout = Job::default_timeout);
void softmax_cross_entropy(Stream &stream, const Tensor &logits, const Tensor &targets,
                           const Tensor &loss, const Tensor &grad, float grad_scale);

// dx = f'(.) dy for f = relu or gelu (`saved` is the forward input x) or sigmoid or tanh
// (`saved` is the forward output y); saved, dy and dx of one shape, each fp32 or bf16.
OpLaunch prepare_activation_grad(Device &device, GradFunction function, const Tensor &saved,
                                 const Tensor &dy, const Tensor &dx);
MatmulStats activation_grad(Device &device, GradFunction function, const Tensor &saved,
                            const Tensor &dy, Tensor &dx,
                            std::chrono::nanoseconds timeout = Job::default_timeout);
void activation_grad(Stream &stream, GradFunction function, const Tensor &saved, const Tensor &dy,
                     const Tensor &dx);

// One update of fp32 master weights w by gradient g, in place (w and the state tensors),
// hyperparameters hp = fp32[8] from sgd_hyperparameters / adam_hyperparameters (a tensor, so
// the learning rate or step changes without a new program: on a stream, write the next step's
// with Stream::copy_from_host, ordered after the previous step's updates); w_bf16 (optional,
// w's element count) receives the new weights as bf16.
OpLaunch prepare_sgd_momentum_step(Device &device, const Tensor &w, const Tensor &g,
                                   const Tensor &momentum, const Tensor &hp,
                                   const Tensor *w_bf16 = nullptr);
MatmulStats sgd_momentum_step(Device &device, Tensor &w, const Tensor &g, Tensor &momentum,
                              const Tensor &hp, Tensor *w_bf16 = nullptr,
                              std::chrono::nanoseconds timeout = Job::default_timeout);
void sgd_momentum_step(Stream &stream, const Tensor &w, const Tensor &g, const Tensor &momentum,
                       const Tensor &hp, const Tensor *w_bf16 = nullptr);
OpLaunch prepare_adam_step(Device &device, const Tensor &w, const Tensor &g, const Tensor &m,
                           const Tensor &v, const Tensor &hp, const Tensor *w_bf16 = nullptr);
MatmulStats adam_step(Device &device, Tensor &w, const Tensor &g, Tensor &m, Tensor &v,
                      const Tensor &hp, Tensor *w_bf16 = nullptr,
                      std::chrono::nanoseconds timeout = Job::default_timeout);
void adam_step(Stream &stream, const Tensor &w, const Tensor &g, const Tensor &m, const Tensor &v,
               const Tensor &hp, const Tensor *w_bf16 = nullptr);

// out = a / b elementwise (VECTOR DIV, spec 1.4): elementwise()'s shapes and dtypes; integer
// division truncates, x / 0 is 0.
OpLaunch prepare_divide(Device &device, const Tensor &a, const Tensor &b, const Tensor &out);
MatmulStats divide(Device &device, const Tensor &a, const Tensor &b, Tensor &out,
                   std::chrono::nanoseconds timeout = Job::default_timeout);
void divide(Stream &stream, const Tensor &a, const Tensor &b, const Tensor &out);

// c[K, N] = a[M, K]^T b[M, N] (weight gradients) and c[M, N] = a[M, K] b[N, K]^T (input
// gradients): the transposed operand is copied by the card's TRANSPOSE into a scratch tensor,
// then matmul() (an OpSequence of the two launches, the scratch held by both); types as
// matmul's (int8 -> int32; bf16 or fp32, both alike, -> fp32). The results equal matmul() of
// the transposed matrix bit for bit, bf16's blocks of 32 included.
OpSequence prepare_matmul_tn(Device &device, const Tensor &a, const Tensor &b, const Tensor &c);
MatmulStats matmul_tn(Device &device, const Tensor &a, const Tensor &b, Tensor &c,
                      std::chrono::nanoseconds timeout = Job::default_timeout);
void matmul_tn(Stream &stream, const Tensor &a, const Tensor &b, const Tensor &c);
OpSequence prepare_matmul_nt(Device &device, const Tensor &a, const Tensor &b, const Tensor &c);
MatmulStats matmul_nt(Device &device, const Tensor &a, const Tensor &b, Tensor &c,
                      std::chrono::nanoseconds timeout = Job::default_timeout);
void matmul_nt(Stream &stream, const Tensor &a, const Tensor &b, const Tensor &c);

// out[c] = sum over r of a[r][c] (the bias gradient of a dense layer's output gradient a[M, N]):
// blocks of columns TRANSPOSEd in the unified buffer then REDUCE SUM, in ascending r, of the
// exactly widened values (an OpSequence of one launch; M <= 65535); out has N elements (fp32
// for bf16 / fp32 a).
OpSequence prepare_column_sums(Device &device, const Tensor &a, const Tensor &out);
MatmulStats column_sums(Device &device, const Tensor &a, Tensor &out,
                        std::chrono::nanoseconds timeout = Job::default_timeout);
void column_sums(Stream &stream, const Tensor &a, const Tensor &out);

// Pooling gradients, for the forward pool2d()'s windows (tensor_ops.hpp's PoolWindow: window_h
// x window_w at stride_h, stride_w over the padded image; overlapping windows, gaps and rows or
// columns that no window reaches included): x, dx [N, H, W, C] and y, dy [N, OH, OW, C], OH =
// (H + 2 pad_h - window_h) / stride_h + 1 (OW likewise), densely packed; x and y fp32 or bf16
// (one dtype for both, y the forward pool2d's output of x), dy and dx each fp32 or bf16. MAX
// gives a window's dy to its first element in row-major order equal to y (0 x dy to the others;
// a window whose y is NaN gives none; padding holds -inf, so only a window whose maximum is -inf
// can give its dy to the padding, which drops it), AVG dy / (window_h window_w) to each (the
// padding's share dropped); each dx element is the fp32 sum of its windows' shares in row-major
// window order, from -0 (one window's share is kept exactly), +0 where no window covers it,
// rounded once for a bf16 dx (train_compiler.hpp's PoolGradProblem; with padding the programs
// work on a padded copy in scratch). Misfitting shapes are refused with the expected y / dy
// shape. The forms with window_h, window_w, stride_h, stride_w have no padding; those with one
// `window` are k x k windows at stride k.
OpLaunch prepare_max_pool2d_grad(Device &device, const Tensor &x, const Tensor &y, const Tensor &dy,
                                 const Tensor &dx, const PoolWindow &window);
MatmulStats max_pool2d_grad(Device &device, const Tensor &x, const Tensor &y, const Tensor &dy,
                            Tensor &dx, const PoolWindow &window,
                            std::chrono::nanoseconds timeout = Job::default_timeout);
void max_pool2d_grad(Stream &stream, const Tensor &x, const Tensor &y, const Tensor &dy,
                     const Tensor &dx, const PoolWindow &window);
OpLaunch prepare_max_pool2d_grad(Device &device, const Tensor &x, const Tensor &y, const Tensor &dy,
                                 const Tensor &dx, std::uint32_t window_h, std::uint32_t window_w,
                                 std::uint32_t stride_h, std::uint32_t stride_w);
MatmulStats max_pool2d_grad(Device &device, const Tensor &x, const Tensor &y, const Tensor &dy,
                            Tensor &dx, std::uint32_t window_h, std::uint32_t window_w,
                            std::uint32_t stride_h, std::uint32_t stride_w,
                            std::chrono::nanoseconds timeout = Job::default_timeout);
void max_pool2d_grad(Stream &stream, const Tensor &x, const Tensor &y, const Tensor &dy,
                     const Tensor &dx, std::uint32_t window_h, std::uint32_t window_w,
                     std::uint32_t stride_h, std::uint32_t stride_w);
inline MatmulStats max_pool2d_grad(Device &device, const Tensor &x, const Tensor &y,
                                   const Tensor &dy, Tensor &dx, std::uint32_t window,
                                   std::chrono::nanoseconds timeout = Job::default_timeout) {
    return max_pool2d_grad(device, x, y, dy, dx, window, window, window, window, timeout);
}

OpLaunch prepare_avg_pool2d_grad(Device &device, const Tensor &dy, const Tensor &dx,
                                 const PoolWindow &window);
MatmulStats avg_pool2d_grad(Device &device, const Tensor &dy, Tensor &dx, const PoolWindow &window,
                            std::chrono::nanoseconds timeout = Job::default_timeout);
void avg_pool2d_grad(Stream &stream, const Tensor &dy, const Tensor &dx, const PoolWindow &window);
OpLaunch prepare_avg_pool2d_grad(Device &device, const Tensor &dy, const Tensor &dx,
                                 std::uint32_t window_h, std::uint32_t window_w,
                                 std::uint32_t stride_h, std::uint32_t stride_w);
MatmulStats avg_pool2d_grad(Device &device, const Tensor &dy, Tensor &dx, std::uint32_t window_h,
                            std::uint32_t window_w, std::uint32_t stride_h, std::uint32_t stride_w,
                            std::chrono::nanoseconds timeout = Job::default_timeout);
void avg_pool2d_grad(Stream &stream, const Tensor &dy, const Tensor &dx, std::uint32_t window_h,
                     std::uint32_t window_w, std::uint32_t stride_h, std::uint32_t stride_w);
inline MatmulStats avg_pool2d_grad(Device &device, const Tensor &dy, Tensor &dx,
                                   std::uint32_t window,
                                   std::chrono::nanoseconds timeout = Job::default_timeout) {
    return avg_pool2d_grad(device, dy, dx, window, window, window, window, timeout);
}

// The spacing of a convolution's kernel taps in the input (grouped_conv2d.hpp's dilation).
struct ConvDilation {
    std::uint32_t h = 1, w = 1;
};

// Gradients of conv2d() with any strides, zero padding below the dilated kernel (KH' = (KH - 1)
// dilation.h + 1, KW' likewise) and dilated taps (grouped_conv2d()'s with one group), lowered
// to a stride-1 convolution (conv_grad_compiler.hpp): dy [N, OH, OW, F] is spread into dys
// [N, H + 2 pad_h - KH' + 1, W + 2 pad_w - KW' + 1, F] (dy's pixels stride apart, zeros between;
// dy itself for stride 1); dx [N, H, W, C] = the convolution of dys with the weights flipped in
// space, transposed in channels and dilated (zero taps between), padded by KH' - 1 - pad_h,
// KW' - 1 - pad_w; dw [KH, KW, C, F] = the taps (ky dilation.h, kx dilation.w) of the
// convolution of x as [C, H, W, N] (batch as channels) with dys as [HS, WS, N, F] (a kernel),
// padded by pad. dy's shape must be the forward output's, OH = (H + 2 pad_h - KH') / stride_h
// + 1 (OW likewise): input rows and columns past the last window get zero gradient. Bf16 or
// fp32 operands (all of one dtype; int8 too, into int32), results fp32 as conv2d's: equal to
// reference_conv2d() of those lowered operands bit for bit (bf16's blocks of 32 over F, resp.
// N, included; the zeros of spreading and dilation add products of +0, stride^2 resp.
// dilation^2 times the dense problem's MACs). One executable each, scratch allocated by each
// prepare. Misfitting shapes are refused with the expected dy shape; padding not below the
// dilated kernel is refused.
OpLaunch prepare_conv2d_input_grad(Device &device, const Tensor &dy, const Tensor &weights,
                                   const Tensor &dx, const Conv2dParams &params = {},
                                   const ConvDilation &dilation = {});
MatmulStats conv2d_input_grad(Device &device, const Tensor &dy, const Tensor &weights, Tensor &dx,
                              const Conv2dParams &params = {}, const ConvDilation &dilation = {},
                              std::chrono::nanoseconds timeout = Job::default_timeout);
void conv2d_input_grad(Stream &stream, const Tensor &dy, const Tensor &weights, const Tensor &dx,
                       const Conv2dParams &params = {}, const ConvDilation &dilation = {});
OpLaunch prepare_conv2d_weight_grad(Device &device, const Tensor &x, const Tensor &dy,
                                    const Tensor &dw, const Conv2dParams &params = {},
                                    const ConvDilation &dilation = {});
MatmulStats conv2d_weight_grad(Device &device, const Tensor &x, const Tensor &dy, Tensor &dw,
                               const Conv2dParams &params = {}, const ConvDilation &dilation = {},
                               std::chrono::nanoseconds timeout = Job::default_timeout);
void conv2d_weight_grad(Stream &stream, const Tensor &x, const Tensor &dy, const Tensor &dw,
                        const Conv2dParams &params = {}, const ConvDilation &dilation = {});

} // namespace tpurt
