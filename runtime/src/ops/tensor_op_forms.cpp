// SPDX-License-Identifier: MIT
// tensor_op_forms.cpp - the blocking and the stream form of every op on tensors, one line each
// on top of its prepare_<op>() (tensor_ops.hpp): run the launch and wait, or queue it.
#include "tpurt/ops/tensor_ops.hpp"

namespace tpurt {

MatmulStats matmul(Device &device, const Tensor &a, const Tensor &b, Tensor &c,
                   std::chrono::nanoseconds timeout) {
    return prepare_matmul(device, a, b, c).run(device, timeout);
}
void matmul(Stream &stream, const Tensor &a, const Tensor &b, const Tensor &c) {
    stream.enqueue(prepare_matmul(stream.device(), a, b, c));
}

MatmulStats dense(Device &device, const Tensor &a, const Tensor &w, const Tensor *bias, Tensor &out,
                  Activation activation, float scale, std::chrono::nanoseconds timeout) {
    return prepare_dense(device, a, w, bias, out, activation, scale).run(device, timeout);
}
void dense(Stream &stream, const Tensor &a, const Tensor &w, const Tensor *bias, const Tensor &out,
           Activation activation, float scale) {
    stream.enqueue(prepare_dense(stream.device(), a, w, bias, out, activation, scale));
}

MatmulStats conv2d(Device &device, const Tensor &input, const Tensor &weights, Tensor &output,
                   const Conv2dParams &params, std::chrono::nanoseconds timeout) {
    return prepare_conv2d(device, input, weights, output, params).run(device, timeout);
}
void conv2d(Stream &stream, const Tensor &input, const Tensor &weights, const Tensor &output,
            const Conv2dParams &params) {
    stream.enqueue(prepare_conv2d(stream.device(), input, weights, output, params));
}

MatmulStats conv2d_layer(Device &device, const Tensor &input, const Tensor &weights,
                         const Tensor *bias, Tensor &output, const Conv2dParams &params,
                         Activation activation, float scale, std::chrono::nanoseconds timeout) {
    return prepare_conv2d_layer(device, input, weights, bias, output, params, activation, scale)
        .run(device, timeout);
}
void conv2d_layer(Stream &stream, const Tensor &input, const Tensor &weights, const Tensor *bias,
                  const Tensor &output, const Conv2dParams &params, Activation activation,
                  float scale) {
    stream.enqueue(prepare_conv2d_layer(stream.device(), input, weights, bias, output, params,
                                        activation, scale));
}

MatmulStats elementwise(Device &device, VectorOp op, const Tensor &a, const Tensor &b, Tensor &out,
                        std::chrono::nanoseconds timeout) {
    return prepare_elementwise(device, op, a, b, out).run(device, timeout);
}
void elementwise(Stream &stream, VectorOp op, const Tensor &a, const Tensor &b, const Tensor &out) {
    stream.enqueue(prepare_elementwise(stream.device(), op, a, b, out));
}

MatmulStats unary(Device &device, Activation function, const Tensor &a, Tensor &out, float scale,
                  std::chrono::nanoseconds timeout) {
    return prepare_unary(device, function, a, out, scale).run(device, timeout);
}
void unary(Stream &stream, Activation function, const Tensor &a, const Tensor &out, float scale) {
    stream.enqueue(prepare_unary(stream.device(), function, a, out, scale));
}

MatmulStats transpose(Device &device, const Tensor &a, Tensor &out,
                      std::chrono::nanoseconds timeout) {
    return prepare_transpose(device, a, out).run(device, timeout);
}
void transpose(Stream &stream, const Tensor &a, const Tensor &out) {
    stream.enqueue(prepare_transpose(stream.device(), a, out));
}

MatmulStats pool2d(Device &device, PoolOp op, const Tensor &input, Tensor &out,
                   const PoolWindow &window, std::chrono::nanoseconds timeout) {
    return prepare_pool2d(device, op, input, out, window).run(device, timeout);
}
void pool2d(Stream &stream, PoolOp op, const Tensor &input, const Tensor &out,
            const PoolWindow &window) {
    stream.enqueue(prepare_pool2d(stream.device(), op, input, out, window));
}
OpLaunch prepare_pool2d(Device &device, PoolOp op, const Tensor &input, const Tensor &out,
                        std::uint32_t window_h, std::uint32_t window_w, std::uint32_t stride_h,
                        std::uint32_t stride_w) {
    return prepare_pool2d(device, op, input, out, {window_h, window_w, stride_h, stride_w});
}
MatmulStats pool2d(Device &device, PoolOp op, const Tensor &input, Tensor &out,
                   std::uint32_t window_h, std::uint32_t window_w, std::uint32_t stride_h,
                   std::uint32_t stride_w, std::chrono::nanoseconds timeout) {
    return pool2d(device, op, input, out, {window_h, window_w, stride_h, stride_w}, timeout);
}
void pool2d(Stream &stream, PoolOp op, const Tensor &input, const Tensor &out,
            std::uint32_t window_h, std::uint32_t window_w, std::uint32_t stride_h,
            std::uint32_t stride_w) {
    pool2d(stream, op, input, out, {window_h, window_w, stride_h, stride_w});
}

MatmulStats reduce_rows(Device &device, ReduceOp op, const Tensor &a, Tensor &out,
                        std::chrono::nanoseconds timeout) {
    return prepare_reduce_rows(device, op, a, out).run(device, timeout);
}
void reduce_rows(Stream &stream, ReduceOp op, const Tensor &a, const Tensor &out) {
    stream.enqueue(prepare_reduce_rows(stream.device(), op, a, out));
}

} // namespace tpurt
