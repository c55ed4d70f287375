// SPDX-License-Identifier: MIT
// reduce_axis_op.cpp - the axis reduction kernel (compile_reduce_axis() as an executable: a,
// dst) and the ops on tensors that use it: reduce_axis (sum or max over any axis) and mean,
// their checks and forms (see shape_ops.hpp).
#include "exec/op_registry.hpp"
#include "ops/shape/dense_operand.hpp"
#include "tpurt/codegen/axis_compiler.hpp"
#include "tpurt/ops/shape_ops.hpp"

#include <string>

namespace tpurt {

namespace detail {

namespace {

struct AxisReduceKernel {
    using Problem = AxisReduceProblem;
    static constexpr const char *name = "reduce_axis";

    static void bind(Problem &p, OpArguments &args) {
        const std::uint64_t outer = p.outer, inner = p.inner;
        args.bind(p.a_addr, "a", outer * p.length * inner * element_size(p.type));
        args.bind(p.dst_addr, "dst", outer * inner * element_size(axis_reduce_result_type(p)));
    }
    static std::vector<Program> compile(const Problem &p, const ArrayLimits &limits) {
        return compile_reduce_axis(p, limits);
    }
    // "sum fp32 4x[16]x32", "mean bf16 1x[64]x128".
    static std::string profile_name(const Problem &p) {
        return std::string(p.mean                  ? "mean "
                           : p.op == ReduceOp::Sum ? "sum "
                                                   : "max ") +
               dtype_name(p.type) + " " + std::to_string(p.outer) + "x[" +
               std::to_string(p.length) + "]x" + std::to_string(p.inner);
    }
};

AxisReduceProblem axis_problem(const DeviceInfo &info, const std::string &op,
                               AxisReduceProblem problem, const TensorLayout &a, std::size_t axis,
                               const TensorLayout &out) {
    require_vector_unit(info);
    require_dense(op, "a", a);
    if (axis >= a.rank())
        refuse(op, "axis " + std::to_string(axis) + " is not one of " + a.describe() + "'s " +
                       std::to_string(a.rank()) + " axes");
    std::uint64_t outer = 1, inner = 1;
    for (std::size_t i = 0; i < axis; ++i)
        outer *= a.size(i);
    for (std::size_t i = axis + 1; i < a.rank(); ++i)
        inner *= a.size(i);
    if (outer > UINT32_MAX || inner > UINT32_MAX)
        refuse(op, "a " + a.describe() + " is too large");
    problem.type = a.dtype();
    problem.outer = static_cast<std::uint32_t>(outer);
    problem.length = static_cast<std::uint32_t>(a.size(axis));
    problem.inner = static_cast<std::uint32_t>(inner);
    if (problem.mean) {
        require_matrix_unit(info, DType::Fp32); // the mean's scale
        if (a.dtype() != DType::Bf16 && a.dtype() != DType::Fp32)
            refuse(op, "a " + a.describe() + " must be bf16 or fp32: cast integers to fp32 first");
    }
    std::vector<std::size_t> removed = a.shape(), kept = a.shape();
    removed.erase(removed.begin() + static_cast<std::ptrdiff_t>(axis));
    kept[axis] = 1;
    const DType out_type = axis_reduce_result_type(problem);
    if (out.dtype() != out_type || !out.is_contiguous() ||
        (out.shape() != removed && out.shape() != kept))
        refuse(op, "out " + out.describe() + " must be a densely packed " + dtype_name(out_type) +
                       " tensor of a " + a.describe() + "'s shape without axis " +
                       std::to_string(axis) + " (or with it as 1)");
    return problem;
}

struct ReduceAxisOp {
    using Kernel = AxisReduceKernel;
    static constexpr const char *name = "reduce_axis";
    static constexpr std::array<OpOperand, 2> operands{{{"a"}, {"out"}}};
    struct Attributes {
        ReduceOp op = ReduceOp::Sum;
        std::uint64_t axis = 0;
    };
    static constexpr std::array<const char *, 2> attributes{"op", "axis"};

    static AxisReduceProblem check(const DeviceInfo &info, const Layouts<ReduceAxisOp> &t,
                                   const Attributes &a) {
        return axis_problem(info, a.op == ReduceOp::Sum ? "sum over an axis" : "max over an axis",
                            {.op = a.op}, *t[0], a.axis, *t[1]);
    }
};

struct MeanOp {
    using Kernel = AxisReduceKernel;
    static constexpr const char *name = "mean";
    static constexpr std::array<OpOperand, 2> operands{{{"a"}, {"out"}}};
    struct Attributes {
        std::uint64_t axis = 0;
    };
    static constexpr std::array<const char *, 1> attributes{"axis"};

    static AxisReduceProblem check(const DeviceInfo &info, const Layouts<MeanOp> &t,
                                   const Attributes &a) {
        return axis_problem(info, name, {.op = ReduceOp::Sum, .mean = true}, *t[0], a.axis, *t[1]);
    }
};

} // namespace

} // namespace detail

TPURT_KERNEL(detail::AxisReduceKernel);
TPURT_REGISTER_OP(reduce_axis_op, ReduceAxisOp);
TPURT_REGISTER_OP(mean_op, MeanOp);

using detail::MeanOp;
using detail::ReduceAxisOp;

OpLaunch prepare_reduce_axis(Device &device, ReduceOp op, const Tensor &a, std::size_t axis,
                             const Tensor &out) {
    return detail::prepare<ReduceAxisOp>(device, {&a, &out}, {op, axis});
}
MatmulStats reduce_axis(Device &device, ReduceOp op, const Tensor &a, std::size_t axis, Tensor &out,
                        std::chrono::nanoseconds timeout) {
    return detail::run<ReduceAxisOp>(device, {&a, &out}, {op, axis}, timeout);
}
void reduce_axis(Stream &stream, ReduceOp op, const Tensor &a, std::size_t axis,
                 const Tensor &out) {
    detail::enqueue<ReduceAxisOp>(stream, {&a, &out}, {op, axis});
}

OpLaunch prepare_mean(Device &device, const Tensor &a, std::size_t axis, const Tensor &out) {
    return detail::prepare<MeanOp>(device, {&a, &out}, {axis});
}
MatmulStats mean(Device &device, const Tensor &a, std::size_t axis, Tensor &out,
                 std::chrono::nanoseconds timeout) {
    return detail::run<MeanOp>(device, {&a, &out}, {axis}, timeout);
}
void mean(Stream &stream, const Tensor &a, std::size_t axis, const Tensor &out) {
    detail::enqueue<MeanOp>(stream, {&a, &out}, {axis});
}

} // namespace tpurt
