// SPDX-License-Identifier: MIT
// reduce_rows_op.cpp - the reduction kernel (compile_reduce() as an executable: a, dst), the
// reduce_rows op on tensors (the sum or maximum over the last dimension) and column_sums' launch
// (the sum over the first of a matrix: the bias gradient).
#include "exec/op_registry.hpp"
#include "ops/vector/rows.hpp"
#include "tpurt/codegen/vector_compiler.hpp"
#include "tpurt/ops/tensor_ops.hpp"
#include "tpurt/ops/train_ops.hpp"

#include <string>

namespace tpurt {

namespace detail {

namespace {

struct ReduceKernel {
    using Problem = ReduceProblem;
    static constexpr const char *name = "reduce";

    static void bind(Problem &p, OpArguments &args) {
        const std::uint64_t row = std::uint64_t{p.cols} * element_size(p.type);
        args.bind(p.a_addr, "a", (p.rows - 1) * spelled_out(p.a_stride, row) + row);
        args.bind(p.dst_addr, "dst",
                  std::uint64_t{p.columns ? p.cols : p.rows} *
                      element_size(reduce_result_type(p.type, p.op)));
    }
    static std::vector<Program> compile(const Problem &p, const ArrayLimits &limits) {
        return compile_reduce(p, limits);
    }
    // "sum fp32 64x128", "rowmax int8 64x128", "column sum fp32 64x128".
    static std::string profile_name(const Problem &p) {
        return std::string(p.columns ? "column " : "") +
               (p.op == ReduceOp::Sum ? "sum " : "rowmax ") + dtype_name(p.type) + " " +
               std::to_string(p.rows) + "x" + std::to_string(p.cols);
    }
};

struct ReduceRowsOp {
    using Kernel = ReduceKernel;
    static constexpr const char *name = "reduce_rows";
    static constexpr std::array<OpOperand, 2> operands{{{"a"}, {"out"}}};
    struct Attributes {
        ReduceOp op = ReduceOp::Sum;
    };
    static constexpr std::array<const char *, 1> attributes{"op"};

    static ReduceProblem check(const DeviceInfo &info, const Layouts<ReduceRowsOp> &t,
                               const Attributes &attributes) {
        const std::string op = attributes.op == ReduceOp::Sum ? "sum" : "row max";
        const TensorLayout &a = *t[0], &out = *t[1];
        require_vector_unit(info);
        const Rows ra = rows_of(op, "a", a);
        const DType out_type = reduce_result_type(a.dtype(), attributes.op);
        if (out.dtype() != out_type)
            refuse(op, "out " + out.describe() + " must be " + dtype_name(out_type) + " for a " +
                           a.describe());
        if (out.element_count() != ra.rows || !out.is_contiguous())
            refuse(op, "out " + out.describe() +
                           " must be densely packed with one element per row of a " + a.describe());
        return {.type = a.dtype(),
                .op = attributes.op,
                .rows = ra.rows,
                .cols = ra.cols,
                .a_stride = ra.stride};
    }
};

} // namespace

} // namespace detail

TPURT_KERNEL(detail::ReduceKernel);
TPURT_REGISTER_OP(reduce_rows_op, ReduceRowsOp);

using detail::ReduceRowsOp;

OpLaunch prepare_reduce_rows(Device &device, ReduceOp op, const Tensor &a, const Tensor &out) {
    return detail::prepare<ReduceRowsOp>(device, {&a, &out}, {op});
}
MatmulStats reduce_rows(Device &device, ReduceOp op, const Tensor &a, Tensor &out,
                        std::chrono::nanoseconds timeout) {
    return detail::run<ReduceRowsOp>(device, {&a, &out}, {op}, timeout);
}
void reduce_rows(Stream &stream, ReduceOp op, const Tensor &a, const Tensor &out) {
    detail::enqueue<ReduceRowsOp>(stream, {&a, &out}, {op});
}

OpSequence prepare_column_sums(Device &device, const Tensor &a, const Tensor &out) {
    const std::string op = "column_sums";
    using detail::refuse;
    if (a.rank() != 2)
        refuse(op, "a " + a.layout().describe() + " is not a matrix");
    const DType out_type = reduce_result_type(a.dtype(), ReduceOp::Sum);
    if (out.dtype() != out_type || out.element_count() != a.size(1) || !out.is_contiguous())
        refuse(op, "out " + out.layout().describe() + " must be a densely packed " +
                       dtype_name(out_type) + " tensor of " + std::to_string(a.size(1)) +
                       " elements, one per column of a " + a.layout().describe());
    detail::require_vector_unit(device.info());
    const detail::Rows ra = detail::rows_of(op, "a", a.layout());
    const ReduceProblem problem{.type = a.dtype(),
                                .op = ReduceOp::Sum,
                                .rows = ra.rows,
                                .cols = ra.cols,
                                .a_stride = ra.stride,
                                .columns = true};
    return {
        {launch_of(detail::kernel_executable<detail::ReduceKernel>(device, problem), {&a, &out})}};
}

} // namespace tpurt
