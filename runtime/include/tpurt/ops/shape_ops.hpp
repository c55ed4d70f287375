// SPDX-License-Identifier: MIT
// shape_ops.hpp - ops over the axes of tensors, on the card: reductions (sum, max, mean) over
// any axis, permutations of the axes, and matmuls over a leading batch axis. Each op in the three
// forms of tensor_ops.hpp (prepare_<op>, a blocking form with the device, a stream form); operand
// errors are thrown by every form at once. The programs are axis_compiler.hpp's and the matmul
// compiler's (shape_executables.hpp).
#pragma once

#include "tpurt/card/job.hpp"
#include "tpurt/card/launch.hpp"
#include "tpurt/card/vpu_ops.hpp"
#include "tpurt/codegen/shape_executables.hpp"
#include "tpurt/device.hpp"
#include "tpurt/stream.hpp"
#include "tpurt/tensor.hpp"

#include <chrono>
#include <cstddef>
#include <span>

namespace tpurt {

// out = the sum or maximum of a over `axis` (REDUCE's arithmetic: sums in ascending order along
// the axis, int8 and int32 into int32 with wrap-around, bf16 and fp32 into fp32; MAX keeps the
// dtype). a and out densely packed; out has a's shape without the axis (or with it as 1) and the
// dtype reduce_result_type(a.dtype(), op). The axis must fit the card's unified buffer and 65535
// elements.
MatmulStats reduce_axis(Device &device, ReduceOp op, const Tensor &a, std::size_t axis, Tensor &out,
                        std::chrono::nanoseconds timeout = Job::default_timeout);
OpLaunch prepare_reduce_axis(Device &device, ReduceOp op, const Tensor &a, std::size_t axis,
                             const Tensor &out);
void reduce_axis(Stream &stream, ReduceOp op, const Tensor &a, std::size_t axis, const Tensor &out);

// out = the mean of a over `axis`: the fp32 sum as reduce_axis() computes it times 1.0f / n (one
// rounding), for bf16 or fp32 a; out fp32, shaped as for reduce_axis().
MatmulStats mean(Device &device, const Tensor &a, std::size_t axis, Tensor &out,
                 std::chrono::nanoseconds timeout = Job::default_timeout);
OpLaunch prepare_mean(Device &device, const Tensor &a, std::size_t axis, const Tensor &out);
void mean(Stream &stream, const Tensor &a, std::size_t axis, const Tensor &out);

// out = a with its axes in the order `order` (out's axis i is a's axis order[i], as
// Tensor::permute() views it), copied into out's densely packed layout; a densely packed, any
// dtype.
MatmulStats permute(Device &device, const Tensor &a, std::span<const std::size_t> order,
                    Tensor &out, std::chrono::nanoseconds timeout = Job::default_timeout);
OpLaunch prepare_permute(Device &device, const Tensor &a, std::span<const std::size_t> order,
                         const Tensor &out);
void permute(Stream &stream, const Tensor &a, std::span<const std::size_t> order,
             const Tensor &out);

// c[i] = a[i] x b[i] for every i of the batch: a [B, M, K], b [B, K, N] or one b [K, N] for
// every matrix, c [B, M, N]; types and row layouts as matmul()'s (rows may be strided, the
// elements of a row adjacent; the batch axis may have any stride). Each product equals
// matmul() of that matrix, bit for bit. With a shared b and evenly spaced rows of a and c
// across the batch, the batch runs as one [B M, K] x [K, N] matmul.
MatmulStats batched_matmul(Device &device, const Tensor &a, const Tensor &b, Tensor &c,
                           std::chrono::nanoseconds timeout = Job::default_timeout);
OpLaunch prepare_batched_matmul(Device &device, const Tensor &a, const Tensor &b, const Tensor &c);
void batched_matmul(Stream &stream, const Tensor &a, const Tensor &b, const Tensor &c);

} // namespace tpurt
