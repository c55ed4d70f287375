// SPDX-License-Identifier: MIT
// square_op.cpp - the square op, out = a x a elementwise in the card's VECTOR MUL arithmetic
// (int8 saturating, int32 wrapping, bf16 computed in binary32 and rounded, fp32): its kernel
// (compile_elementwise() with a as both operands; arguments a, dst) and its checks. Reached by
// name ("square") from C++ (tpurt/ops/op_registry.hpp) and C (tpurt_op_launch); runtime/README.md's
// "Adding an op" walks through this file.
#include "exec/op_registry.hpp"
#include "ops/vector/rows.hpp"
#include "tpurt/codegen/vector_compiler.hpp"

#include <string>

namespace tpurt {

namespace detail {

namespace {

// The problem: a's rows x cols (rows evenly spaced), out's row stride. No addresses but the
// two fields bind() sets.
struct SquareProblem {
    DType type = DType::Fp32;
    std::uint32_t rows = 0, cols = 0;
    std::uint64_t a_stride = 0, dst_stride = 0; // bytes between rows
    std::uint64_t a_addr = 0, dst_addr = 0;
};

struct SquareKernel {
    using Problem = SquareProblem;
    static constexpr const char *name = "square";

    static void bind(Problem &p, OpArguments &args) {
        const std::uint64_t row = std::uint64_t{p.cols} * element_size(p.type);
        args.bind(p.a_addr, "a", (p.rows - 1) * p.a_stride + row);
        args.bind(p.dst_addr, "dst", (p.rows - 1) * p.dst_stride + row);
    }
    static std::vector<Program> compile(const Problem &p, const ArrayLimits &limits) {
        return compile_elementwise({.type = p.type,
                                    .op = VectorOp::Mul,
                                    .rows = p.rows,
                                    .cols = p.cols,
                                    .a_addr = p.a_addr,
                                    .b_addr = p.a_addr,
                                    .dst_addr = p.dst_addr,
                                    .a_stride = p.a_stride,
                                    .b_stride = p.a_stride,
                                    .dst_stride = p.dst_stride},
                                   limits);
    }
    // "square fp32 64x128".
    static std::string profile_name(const Problem &p) {
        return std::string("square ") + dtype_name(p.type) + " " + std::to_string(p.rows) + "x" +
               std::to_string(p.cols);
    }
};

struct SquareOp {
    using Kernel = SquareKernel;
    static constexpr const char *name = "square";
    static constexpr std::array<OpOperand, 2> operands{{{"a"}, {"out"}}};
    struct Attributes {};
    static constexpr std::array<const char *, 0> attributes{};

    static SquareProblem check(const DeviceInfo &info, const Layouts<SquareOp> &t,
                               const Attributes &) {
        const TensorLayout &a = *t[0], &out = *t[1];
        require_vector_unit(info);
        if (out.dtype() != a.dtype() || out.shape() != a.shape())
            refuse(name,
                   "out " + out.describe() + " must have a's dtype and shape " + a.describe());
        const Rows ra = rows_of(name, "a", a), ro = rows_of(name, "out", out);
        return {.type = a.dtype(),
                .rows = ra.rows,
                .cols = ra.cols,
                .a_stride = ra.stride,
                .dst_stride = ro.stride};
    }
};

} // namespace

} // namespace detail

TPURT_REGISTER_OP(square_op, SquareOp);

} // namespace tpurt
