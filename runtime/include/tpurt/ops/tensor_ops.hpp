// SPDX-License-Identifier: MIT
// tensor_ops.hpp - the card's ops on tensors: matmul, dense layers, convolutions, elementwise
// ops, row reductions. Operands may
// be views: rows of a matrix may lie any number of bytes apart (a slice of a larger matrix, an
// offset into a buffer), but the elements of a row must be adjacent (last stride 1); anything else
// is refused with an error that says so. Results are exactly those of the same ops on host arrays.
//
// Each op comes in three forms (the pattern for new ops, runtime/README.md):
//   OpLaunch prepare_op(Device &, operands...)   checks, compiles or fetches the executable
//   MatmulStats op(Device &, operands..., timeout) runs it and waits: prepare_op(...).run(...)
//   void op(Stream &, operands...)               queues it and returns at once:
//                                                stream.enqueue(prepare_op(stream.device(), ...))
// Operand errors are thrown by every form at once; errors of queued jobs by the stream's next
// synchronize() or event wait.
#pragma once

#include "tpurt/card/job.hpp"
#include "tpurt/card/launch.hpp"
#include "tpurt/card/vpu_ops.hpp"
#include "tpurt/codegen/vector_compiler.hpp"
#include "tpurt/device.hpp"
#include "tpurt/ops/conv2d.hpp"
#include "tpurt/ops/dense.hpp"
#include "tpurt/ops/matmul.hpp"
#include "tpurt/stream.hpp"
#include "tpurt/tensor.hpp"

#include <chrono>

namespace tpurt {

// c[M, N] = a[M, K] x b[K, N]: a and b Int8 (c Int32), Bf16 or Fp32 (c Fp32).
MatmulStats matmul(Device &device, const Tensor &a, const Tensor &b, Tensor &c,
                   std::chrono::nanoseconds timeout = Job::default_timeout);
OpLaunch prepare_matmul(Device &device, const Tensor &a, const Tensor &b, const Tensor &c);
void matmul(Stream &stream, const Tensor &a, const Tensor &b, const Tensor &c);

// A dense layer (dense.hpp): out[M, N] = activation(scale x (a[M, K] x w[K, N] + bias[N])),
// a and w Int8, Bf16 or Fp32, bias Fp32 or none, out of any dtype the card converts to
// (Int8, Bf16, Int32, Fp32); rows may be strided as for matmul.
MatmulStats dense(Device &device, const Tensor &a, const Tensor &w, const Tensor *bias, Tensor &out,
                  Activation activation = Activation::None, float scale = 1.0f,
                  std::chrono::nanoseconds timeout = Job::default_timeout);
OpLaunch prepare_dense(Device &device, const Tensor &a, const Tensor &w, const Tensor *bias,
                       const Tensor &out, Activation activation = Activation::None,
                       float scale = 1.0f);
void dense(Stream &stream, const Tensor &a, const Tensor &w, const Tensor *bias, const Tensor &out,
           Activation activation = Activation::None, float scale = 1.0f);

// Strides and zero padding of a convolution on tensors.
struct Conv2dParams {
    std::uint32_t stride_h = 1, stride_w = 1;
    std::uint32_t pad_h = 0, pad_w = 0;
};

// conv2d.hpp's convolution: input [N, H, W, C], weights [KH, KW, C, F], output [N, OH, OW, F]
// (Int8 -> Int32, Bf16 or Fp32 -> Fp32), all densely packed (views at any offset).
MatmulStats conv2d(Device &device, const Tensor &input, const Tensor &weights, Tensor &output,
                   const Conv2dParams &params = {},
                   std::chrono::nanoseconds timeout = Job::default_timeout);
OpLaunch prepare_conv2d(Device &device, const Tensor &input, const Tensor &weights,
                        const Tensor &output, const Conv2dParams &params = {});
void conv2d(Stream &stream, const Tensor &input, const Tensor &weights, const Tensor &output,
            const Conv2dParams &params = {});

// A convolution layer, conv2d.hpp's epilogue on the card: output = activation(scale x
// (conv2d(input, weights) + bias[F])) converted to output's dtype (int8, bf16, int32 for int8
// inputs, or fp32), bias fp32 [F] or none; for int8 inputs the int32 sums are converted to fp32
// first, so `scale` requantises them. Shapes as conv2d's.
MatmulStats conv2d_layer(Device &device, const Tensor &input, const Tensor &weights,
                         const Tensor *bias, Tensor &output, const Conv2dParams &params = {},
                         Activation activation = Activation::None, float scale = 1.0f,
                         std::chrono::nanoseconds timeout = Job::default_timeout);
OpLaunch prepare_conv2d_layer(Device &device, const Tensor &input, const Tensor &weights,
                              const Tensor *bias, const Tensor &output,
                              const Conv2dParams &params = {},
                              Activation activation = Activation::None, float scale = 1.0f);
void conv2d_layer(Stream &stream, const Tensor &input, const Tensor &weights, const Tensor *bias,
                  const Tensor &output, const Conv2dParams &params = {},
                  Activation activation = Activation::None, float scale = 1.0f);

// out = a op b elementwise over a's shape, in the card's VECTOR arithmetic (int8 saturating,
// int32 wrapping, bf16 computed in binary32 and rounded, fp32; MAX / MIN propagate NaN). b has
// a's shape, or only a's last dimension (shape [C], or leading dimensions of 1), which is then
// combined with every row of a. a, b and out share one dtype. Leading dimensions are walked as
// rows, so each of a, b and out must have adjacent elements in its last dimension and evenly
// spaced rows (any view that slices only the first dimension or the last qualifies).
MatmulStats elementwise(Device &device, VectorOp op, const Tensor &a, const Tensor &b, Tensor &out,
                        std::chrono::nanoseconds timeout = Job::default_timeout);
OpLaunch prepare_elementwise(Device &device, VectorOp op, const Tensor &a, const Tensor &b,
                             const Tensor &out);
void elementwise(Stream &stream, VectorOp op, const Tensor &a, const Tensor &b, const Tensor &out);
inline MatmulStats add(Device &d, const Tensor &a, const Tensor &b, Tensor &out) {
    return elementwise(d, VectorOp::Add, a, b, out);
}
inline void add(Stream &s, const Tensor &a, const Tensor &b, const Tensor &out) {
    elementwise(s, VectorOp::Add, a, b, out);
}
inline MatmulStats sub(Device &d, const Tensor &a, const Tensor &b, Tensor &out) {
    return elementwise(d, VectorOp::Sub, a, b, out);
}
inline void sub(Stream &s, const Tensor &a, const Tensor &b, const Tensor &out) {
    elementwise(s, VectorOp::Sub, a, b, out);
}
inline MatmulStats mul(Device &d, const Tensor &a, const Tensor &b, Tensor &out) {
    return elementwise(d, VectorOp::Mul, a, b, out);
}
inline void mul(Stream &s, const Tensor &a, const Tensor &b, const Tensor &out) {
    elementwise(s, VectorOp::Mul, a, b, out);
}
inline MatmulStats maximum(Device &d, const Tensor &a, const Tensor &b, Tensor &out) {
    return elementwise(d, VectorOp::Max, a, b, out);
}
inline void maximum(Stream &s, const Tensor &a, const Tensor &b, const Tensor &out) {
    elementwise(s, VectorOp::Max, a, b, out);
}
inline MatmulStats minimum(Device &d, const Tensor &a, const Tensor &b, Tensor &out) {
    return elementwise(d, VectorOp::Min, a, b, out);
}
inline void minimum(Stream &s, const Tensor &a, const Tensor &b, const Tensor &out) {
    elementwise(s, VectorOp::Min, a, b, out);
}

// out = f(scale x a) elementwise with ACTIVATE's functions (relu, relu6, gelu, sigmoid, tanh,
// exp, or none: a conversion), exactly as docs/hardware.md defines them, on int8, bf16 or fp32
// a into out of any dtype ACTIVATE converts to (int8, bf16, int32, fp32: round to nearest even,
// saturating). a and out are densely packed with the same shape. A zero of either sign is read
// as +0, and bf16 subnormals as +0 (see vector_compiler.hpp).
MatmulStats unary(Device &device, Activation function, const Tensor &a, Tensor &out,
                  float scale = 1.0f, std::chrono::nanoseconds timeout = Job::default_timeout);
OpLaunch prepare_unary(Device &device, Activation function, const Tensor &a, const Tensor &out,
                       float scale = 1.0f);
void unary(Stream &stream, Activation function, const Tensor &a, const Tensor &out,
           float scale = 1.0f);
// out = scale x a converted to out's dtype: casts between fp32, bf16 and int8, quantising
// (fp32 -> int8 with scale 1 / step) and dequantising (int8 -> fp32 with scale step).
inline MatmulStats cast(Device &device, const Tensor &a, Tensor &out, float scale = 1.0f) {
    return unary(device, Activation::None, a, out, scale);
}
inline void cast(Stream &stream, const Tensor &a, const Tensor &out, float scale = 1.0f) {
    unary(stream, Activation::None, a, out, scale);
}

// out[c][r] = a[r][c] on the card (TRANSPOSE), for a matrix of any dtype; rows of a and out
// may be strided as for matmul. With Tensor::transpose() views this makes the contiguous copy
// that matmul needs of a transposed operand.
MatmulStats transpose(Device &device, const Tensor &a, Tensor &out,
                      std::chrono::nanoseconds timeout = Job::default_timeout);
OpLaunch prepare_transpose(Device &device, const Tensor &a, const Tensor &out);
void transpose(Stream &stream, const Tensor &a, const Tensor &out);

// A pooling window: window_h x window_w at strides stride_h x stride_w over the image padded
// with pad_h rows above and below and pad_w pixels left and right, each padding below its
// window (so that every window holds a pixel of the image). Max pooling pads with -inf (an
// integer type's lowest value), which it never picks; average pooling with 0, and divides by
// window_h x window_w also where the window reaches into the padding (PyTorch's default,
// count_include_pad). Output extent: (H + 2 pad_h - window_h) / stride_h + 1, W likewise.
struct PoolWindow {
    std::uint32_t window_h = 2, window_w = 2;
    std::uint32_t stride_h = 2, stride_w = 2;
    std::uint32_t pad_h = 0, pad_w = 0;
};

// Max or average pooling (POOL): input [N, H, W, C] -> out [N, OH, OW, C] over `window`'s
// windows of at most 16 x 16, any dtype; both densely packed. MAX keeps the element (NaN if the
// window holds one); AVG sums in int32 (int8, int32) or fp32 (bf16, fp32), divides in binary32
// and converts back. Max pooling with padding needs the training instructions (spec 1.4). The
// forms with window_h, window_w, stride_h, stride_w have no padding.
MatmulStats pool2d(Device &device, PoolOp op, const Tensor &input, Tensor &out,
                   const PoolWindow &window,
                   std::chrono::nanoseconds timeout = Job::default_timeout);
OpLaunch prepare_pool2d(Device &device, PoolOp op, const Tensor &input, const Tensor &out,
                        const PoolWindow &window);
void pool2d(Stream &stream, PoolOp op, const Tensor &input, const Tensor &out,
            const PoolWindow &window);
MatmulStats pool2d(Device &device, PoolOp op, const Tensor &input, Tensor &out,
                   std::uint32_t window_h, std::uint32_t window_w, std::uint32_t stride_h,
                   std::uint32_t stride_w, std::chrono::nanoseconds timeout = Job::default_timeout);
OpLaunch prepare_pool2d(Device &device, PoolOp op, const Tensor &input, const Tensor &out,
                        std::uint32_t window_h, std::uint32_t window_w, std::uint32_t stride_h,
                        std::uint32_t stride_w);
void pool2d(Stream &stream, PoolOp op, const Tensor &input, const Tensor &out,
            std::uint32_t window_h, std::uint32_t window_w, std::uint32_t stride_h,
            std::uint32_t stride_w);

// out = the sum or maximum over a's last dimension (REDUCE: sums in ascending order, int8 and
// int32 into int32 with wrap-around, bf16 and fp32 into fp32; MAX keeps the dtype). out is a
// densely packed tensor of one element per row of a (for example a's shape without the last
// dimension) of dtype reduce_result_type(a.dtype(), op). A row must fit the card's unified
// buffer and 65535 elements.
MatmulStats reduce_rows(Device &device, ReduceOp op, const Tensor &a, Tensor &out,
                        std::chrono::nanoseconds timeout = Job::default_timeout);
OpLaunch prepare_reduce_rows(Device &device, ReduceOp op, const Tensor &a, const Tensor &out);
void reduce_rows(Stream &stream, ReduceOp op, const Tensor &a, const Tensor &out);

} // namespace tpurt
