// SPDX-License-Identifier: MIT
// batched_matmul.cpp - checks a batched matmul's tensors, folds a shared-b batch with evenly
// spaced rows into one matmul, fetches the executable and gives the op's blocking and stream
// forms (see shape_ops.hpp).
#include "ops/op_checks.hpp"
#include "tpurt/error.hpp"
#include "tpurt/ops/shape_ops.hpp"

#include <string>

namespace tpurt {

OpLaunch prepare_batched_matmul(Device &device, const Tensor &a, const Tensor &b, const Tensor &c) {
    const std::string op = "batched matmul";
    const auto refuse = [&](const std::string &message) {
        throw Error(ErrorCode::InvalidArgument, op + ": " + message);
    };
    if (!is_matmul_input(a.dtype()))
        refuse("a is " + a.layout().describe() + ": the card multiplies int8, bf16 or fp32");
    const DType type = a.dtype();
    detail::require_matrix_unit(device.info(), type);
    if (a.rank() != 3 || c.rank() != 3 || (b.rank() != 3 && b.rank() != 2))
        refuse("a " + a.layout().describe() + ", b " + b.layout().describe() + " and c " +
               c.layout().describe() + " must be [B, M, K], [B, K, N] or [K, N], and [B, M, N]");
    const bool shared = b.rank() == 2;
    const std::size_t batch = a.size(0);
    const Tensor b0 = shared ? b : b.select(0, 0);
    if (batch == 0 || c.size(0) != batch || (!shared && b.size(0) != batch) ||
        b0.size(0) != a.size(2) || c.size(1) != a.size(1) || c.size(2) != b0.size(1))
        refuse("shapes do not chain: a " + a.layout().describe() + " x b " + b.layout().describe() +
               " -> c " + c.layout().describe());
    if (batch > UINT32_MAX || a.size(1) > UINT32_MAX || a.size(2) > UINT32_MAX ||
        b0.size(1) > UINT32_MAX || a.size(1) * batch > UINT32_MAX)
        refuse("dimensions beyond 2^32 - 1");
    MatmulProblem matrix;
    matrix.type = type;
    matrix.a_stride = detail::matrix_row_stride(op, "a[0]", a.select(0, 0).layout(), type);
    matrix.b_stride = detail::matrix_row_stride(op, "b", b0.layout(), type);
    matrix.c_stride =
        detail::matrix_row_stride(op, "c[0]", c.select(0, 0).layout(), accumulator_type(type));
    matrix.m = static_cast<std::uint32_t>(a.size(1));
    matrix.k = static_cast<std::uint32_t>(a.size(2));
    matrix.n = static_cast<std::uint32_t>(b0.size(1));
    const auto batch_bytes = [](const Tensor &t) {
        return std::uint64_t{t.strides()[0]} * element_size(t.dtype());
    };
    BatchedMatmulProblem problem{.matrix = matrix,
                                 .batch = static_cast<std::uint32_t>(batch),
                                 .a_batch = batch_bytes(a),
                                 .b_batch = shared ? 0 : batch_bytes(b),
                                 .c_batch = batch_bytes(c)};
    const std::uint64_t c_matrix =
        (matrix.m - 1) * matrix.c_stride + std::uint64_t{matrix.n} * element_size(c.dtype());
    if (batch > 1 && problem.c_batch < c_matrix)
        refuse("c " + c.layout().describe() + " has overlapping matrices");
    if (batch == 1) {
        problem.a_batch = problem.b_batch = problem.c_batch = 0;
    } else if (shared && problem.a_batch == matrix.m * matrix.a_stride &&
               problem.c_batch == matrix.m * matrix.c_stride) {
        problem.matrix.m = static_cast<std::uint32_t>(batch * matrix.m); // one [B M, K] matmul
        problem.batch = 1;
        problem.a_batch = problem.c_batch = 0;
    }
    return launch_of(batched_matmul_executable(device, problem), {&a, &b, &c});
}

MatmulStats batched_matmul(Device &device, const Tensor &a, const Tensor &b, Tensor &c,
                           std::chrono::nanoseconds timeout) {
    return prepare_batched_matmul(device, a, b, c).run(device, timeout);
}
void batched_matmul(Stream &stream, const Tensor &a, const Tensor &b, const Tensor &c) {
    stream.enqueue(prepare_batched_matmul(stream.device(), a, b, c));
}

} // namespace tpurt
