// SPDX-License-Identifier: MIT
// transpose_op.cpp - the transpose kernel (compile_transpose() as an executable: a, dst) and
// the transpose op on tensors: out[c][r] = a[r][c] for matrices of any dtype.
#include "exec/op_registry.hpp"
#include "ops/vector/rows.hpp"
#include "tpurt/codegen/vector_compiler.hpp"
#include "tpurt/ops/tensor_ops.hpp"

#include <string>

namespace tpurt {

namespace detail {

namespace {

struct TransposeKernel {
    using Problem = TransposeProblem;
    static constexpr const char *name = "transpose";

    static void bind(Problem &p, OpArguments &args) {
        const std::uint64_t elem = element_size(p.type);
        args.bind(p.a_addr, "a",
                  (p.rows - 1) * spelled_out(p.a_stride, p.cols * elem) + p.cols * elem);
        args.bind(p.dst_addr, "dst",
                  (p.cols - 1) * spelled_out(p.dst_stride, p.rows * elem) + p.rows * elem);
    }
    static std::vector<Program> compile(const Problem &p, const ArrayLimits &limits) {
        return compile_transpose(p, limits);
    }
    // "transpose fp32 64x128".
    static std::string profile_name(const Problem &p) {
        return "transpose " + std::string(dtype_name(p.type)) + " " + std::to_string(p.rows) + "x" +
               std::to_string(p.cols);
    }
};

struct TransposeOp {
    using Kernel = TransposeKernel;
    static constexpr const char *name = "transpose";
    static constexpr std::array<OpOperand, 2> operands{{{"a"}, {"out"}}};
    struct Attributes {};
    static constexpr std::array<const char *, 0> attributes{};

    static TransposeProblem check(const DeviceInfo &info, const Layouts<TransposeOp> &t,
                                  const Attributes &) {
        const TensorLayout &a = *t[0], &out = *t[1];
        require_vector_unit(info);
        const std::uint64_t a_stride = matrix_row_stride(name, "a", a, a.dtype());
        const std::uint64_t out_stride = matrix_row_stride(name, "out", out, a.dtype());
        if (out.size(0) != a.size(1) || out.size(1) != a.size(0))
            refuse(name, "out " + out.describe() + " is not a " + a.describe() + " transposed");
        if (a.size(0) > UINT32_MAX || a.size(1) > UINT32_MAX)
            refuse(name, "dimensions beyond 2^32 - 1");
        return {.type = a.dtype(),
                .rows = static_cast<std::uint32_t>(a.size(0)),
                .cols = static_cast<std::uint32_t>(a.size(1)),
                .a_stride = a_stride,
                .dst_stride = out_stride};
    }
};

} // namespace

} // namespace detail

TPURT_KERNEL(detail::TransposeKernel);
TPURT_REGISTER_OP(transpose_op, TransposeOp);

using detail::TransposeOp;

OpLaunch prepare_transpose(Device &device, const Tensor &a, const Tensor &out) {
    return detail::prepare<TransposeOp>(device, {&a, &out});
}
MatmulStats transpose(Device &device, const Tensor &a, Tensor &out,
                      std::chrono::nanoseconds timeout) {
    return detail::run<TransposeOp>(device, {&a, &out}, {}, timeout);
}
void transpose(Stream &stream, const Tensor &a, const Tensor &out) {
    detail::enqueue<TransposeOp>(stream, {&a, &out});
}

} // namespace tpurt
