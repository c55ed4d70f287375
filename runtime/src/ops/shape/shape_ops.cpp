// SPDX-License-Identifier: MIT
// shape_ops.cpp - checks the operands of the axis reductions and permutations, fetches their
// executables, and gives their blocking and stream forms (see shape_ops.hpp).
#include "tpurt/ops/shape_ops.hpp"

#include "ops/op_checks.hpp"
#include "tpurt/error.hpp"

#include <string>

namespace tpurt {

namespace {

using detail::refuse;

void require_vector_unit(const Device &device) {
    if (!device.info().has_vector_unit())
        throw Error(ErrorCode::Unsupported, "this card has no vector unit (caps " +
                                                std::to_string(device.info().caps) + ")");
}

void require_dense(const std::string &op, const char *name, const Tensor &t) {
    if (!t.is_contiguous() || t.rank() == 0)
        refuse(op, std::string(name) + " " + t.layout().describe() +
                       " must be densely packed with at least one dimension: copy a view into "
                       "a contiguous tensor first");
    for (std::size_t extent : t.shape())
        if (extent == 0 || extent > UINT32_MAX)
            refuse(op, std::string(name) + " " + t.layout().describe() +
                           " must have extents between 1 and 2^32 - 1");
}

OpLaunch prepare_axis(Device &device, const std::string &op, AxisReduceProblem problem,
                      const Tensor &a, std::size_t axis, const Tensor &out) {
    require_vector_unit(device);
    require_dense(op, "a", a);
    if (axis >= a.rank())
        refuse(op, "axis " + std::to_string(axis) + " is not one of " + a.layout().describe() +
                       "'s " + std::to_string(a.rank()) + " axes");
    std::uint64_t outer = 1, inner = 1;
    for (std::size_t i = 0; i < axis; ++i)
        outer *= a.size(i);
    for (std::size_t i = axis + 1; i < a.rank(); ++i)
        inner *= a.size(i);
    if (outer > UINT32_MAX || inner > UINT32_MAX)
        refuse(op, "a " + a.layout().describe() + " is too large");
    problem.type = a.dtype();
    problem.outer = static_cast<std::uint32_t>(outer);
    problem.length = static_cast<std::uint32_t>(a.size(axis));
    problem.inner = static_cast<std::uint32_t>(inner);
    if (problem.mean) {
        detail::require_matrix_unit(device.info(), DType::Fp32); // the mean's scale
        if (a.dtype() != DType::Bf16 && a.dtype() != DType::Fp32)
            refuse(op, "a " + a.layout().describe() +
                           " must be bf16 or fp32: cast integers to fp32 first");
    }
    std::vector<std::size_t> removed = a.shape(), kept = a.shape();
    removed.erase(removed.begin() + static_cast<std::ptrdiff_t>(axis));
    kept[axis] = 1;
    const DType out_type = axis_reduce_result_type(problem);
    if (out.dtype() != out_type || !out.is_contiguous() ||
        (out.shape() != removed && out.shape() != kept))
        refuse(op, "out " + out.layout().describe() + " must be a densely packed " +
                       dtype_name(out_type) + " tensor of a " + a.layout().describe() +
                       "'s shape without axis " + std::to_string(axis) + " (or with it as 1)");
    return launch_of(reduce_axis_executable(device, problem), {&a, &out});
}

} // namespace

OpLaunch prepare_reduce_axis(Device &device, ReduceOp op, const Tensor &a, std::size_t axis,
                             const Tensor &out) {
    return prepare_axis(device, op == ReduceOp::Sum ? "sum over an axis" : "max over an axis",
                        {.op = op}, a, axis, out);
}

OpLaunch prepare_mean(Device &device, const Tensor &a, std::size_t axis, const Tensor &out) {
    return prepare_axis(device, "mean", {.op = ReduceOp::Sum, .mean = true}, a, axis, out);
}

OpLaunch prepare_permute(Device &device, const Tensor &a, std::span<const std::size_t> order,
                         const Tensor &out) {
    const std::string op = "permute";
    require_vector_unit(device);
    require_dense(op, "a", a);
    require_dense(op, "out", out);
    PermuteProblem problem{.type = a.dtype(), .shape = {}, .perm = {}, .a_addr = 0, .dst_addr = 0};
    const std::string wrong_order = "the order must name each of a " + a.layout().describe() +
                                    "'s " + std::to_string(a.rank()) + " axes once";
    if (order.size() != a.rank())
        refuse(op, wrong_order);
    std::vector<bool> seen(a.rank(), false);
    std::vector<std::size_t> expected;
    for (std::size_t axis : order) {
        if (axis >= a.rank() || seen[axis])
            refuse(op, wrong_order);
        seen[axis] = true;
        problem.perm.push_back(static_cast<std::uint32_t>(axis));
        expected.push_back(a.size(axis));
    }
    for (std::size_t extent : a.shape())
        problem.shape.push_back(static_cast<std::uint32_t>(extent));
    if (out.dtype() != a.dtype() || out.shape() != expected)
        refuse(op, "out " + out.layout().describe() + " must be a " + dtype_name(a.dtype()) +
                       " tensor of a " + a.layout().describe() + "'s shape permuted");
    return launch_of(permute_executable(device, problem), {&a, &out});
}

MatmulStats reduce_axis(Device &device, ReduceOp op, const Tensor &a, std::size_t axis, Tensor &out,
                        std::chrono::nanoseconds timeout) {
    return prepare_reduce_axis(device, op, a, axis, out).run(device, timeout);
}
void reduce_axis(Stream &stream, ReduceOp op, const Tensor &a, std::size_t axis,
                 const Tensor &out) {
    stream.enqueue(prepare_reduce_axis(stream.device(), op, a, axis, out));
}

MatmulStats mean(Device &device, const Tensor &a, std::size_t axis, Tensor &out,
                 std::chrono::nanoseconds timeout) {
    return prepare_mean(device, a, axis, out).run(device, timeout);
}
void mean(Stream &stream, const Tensor &a, std::size_t axis, const Tensor &out) {
    stream.enqueue(prepare_mean(stream.device(), a, axis, out));
}

MatmulStats permute(Device &device, const Tensor &a, std::span<const std::size_t> order,
                    Tensor &out, std::chrono::nanoseconds timeout) {
    return prepare_permute(device, a, order, out).run(device, timeout);
}
void permute(Stream &stream, const Tensor &a, std::span<const std::size_t> order,
             const Tensor &out) {
    stream.enqueue(prepare_permute(stream.device(), a, order, out));
}

} // namespace tpurt
