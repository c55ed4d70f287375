// SPDX-License-Identifier: MIT
// matmul_op.cpp - the matmul kernel (compile_matmul() as an executable: A, B, C, then the bias
// when the epilogue has one) and the ops on tensors that use it: matmul and dense (a matmul
// with ACTIVATE's epilogue), their checks and forms.
#include "exec/op_registry.hpp"
#include "tpurt/codegen/matmul_compiler.hpp"
#include "tpurt/ops/tensor_ops.hpp"

#include <optional>
#include <string>

namespace tpurt {

namespace detail {

namespace {

struct MatmulKernel {
    using Problem = MatmulProblem;
    static constexpr const char *name = "matmul";

    static void bind(Problem &p, OpArguments &args) {
        const std::uint64_t elem = element_size(p.type);
        const std::uint64_t c_elem =
            element_size(p.epilogue ? p.epilogue->out_type : accumulator_type(p.type));
        const auto extent = [&](std::uint32_t rows, std::uint64_t &stride, std::uint64_t row) {
            return (rows - 1) * spelled_out(stride, row) + row;
        };
        args.bind(p.a_addr, "A", extent(p.m, p.a_stride, p.k * elem));
        args.bind(p.b_addr, "B", extent(p.k, p.b_stride, p.n * elem));
        args.bind(p.c_addr, "C", extent(p.m, p.c_stride, p.n * c_elem));
        if (p.epilogue && p.epilogue->bias_addr)
            args.bind(*p.epilogue->bias_addr, "bias", std::uint64_t{p.n} * 4);
    }

    static std::vector<Program> compile(const Problem &p, const ArrayLimits &limits) {
        if (p.m == 0 || p.k == 0 || p.n == 0)
            throw Error(ErrorCode::InvalidArgument,
                        profile_name(p) + ": dimensions must be non-zero");
        return compile_matmul(p, limits).programs;
    }

    // "matmul bf16 512x512x512", "dense int8->int8 relu 64x784x256".
    static std::string profile_name(const Problem &p) {
        const std::string shape =
            std::to_string(p.m) + "x" + std::to_string(p.k) + "x" + std::to_string(p.n);
        if (!p.epilogue)
            return std::string("matmul ") + dtype_name(p.type) + " " + shape;
        return std::string("dense ") + dtype_name(p.type) + "->" +
               dtype_name(p.epilogue->out_type) + " " + activation_name(p.epilogue->function) +
               " " + shape;
    }
};

// A, B and the output as a chained product of matrices whose rows are unit-strided.
MatmulProblem matrix_problem(const DeviceInfo &info, const std::string &op, const char *b_name,
                             const char *c_name, const TensorLayout &a, const TensorLayout &b,
                             const TensorLayout &c, DType c_type) {
    if (!is_matmul_input(a.dtype()))
        refuse(op, "A is " + a.describe() + ": the card multiplies int8, bf16 or fp32");
    const DType type = a.dtype();
    require_matrix_unit(info, type);
    MatmulProblem problem;
    problem.type = type;
    problem.a_stride = matrix_row_stride(op, "A", a, type);
    problem.b_stride = matrix_row_stride(op, b_name, b, type);
    problem.c_stride = matrix_row_stride(op, c_name, c, c_type);
    if (b.size(0) != a.size(1) || c.size(0) != a.size(0) || c.size(1) != b.size(1))
        refuse(op, "shapes do not chain: A " + a.describe() + " x " + b_name + " " + b.describe() +
                       " -> " + c_name + " " + c.describe());
    if (a.size(0) > UINT32_MAX || a.size(1) > UINT32_MAX || b.size(1) > UINT32_MAX)
        refuse(op, "dimensions beyond 2^32 - 1");
    problem.m = static_cast<std::uint32_t>(a.size(0));
    problem.k = static_cast<std::uint32_t>(a.size(1));
    problem.n = static_cast<std::uint32_t>(b.size(1));
    return problem;
}

struct MatmulOp {
    using Kernel = MatmulKernel;
    static constexpr const char *name = "matmul";
    static constexpr std::array<OpOperand, 3> operands{{{"a"}, {"b"}, {"c"}}};
    struct Attributes {};
    static constexpr std::array<const char *, 0> attributes{};

    static MatmulProblem check(const DeviceInfo &info, const Layouts<MatmulOp> &t,
                               const Attributes &) {
        return matrix_problem(info, name, "B", "C", *t[0], *t[1], *t[2],
                              accumulator_type(t[0]->dtype()));
    }
};

struct DenseOp {
    using Kernel = MatmulKernel;
    static constexpr const char *name = "dense";
    static constexpr std::array<OpOperand, 4> operands{{{"a"}, {"w"}, {"out"}, {"bias", true}}};
    struct Attributes {
        Activation activation = Activation::None;
        float scale = 1.0f;
    };
    static constexpr std::array<const char *, 2> attributes{"activation", "scale"};

    static MatmulProblem check(const DeviceInfo &info, const Layouts<DenseOp> &t,
                               const Attributes &attributes) {
        const std::string op = "dense layer";
        const TensorLayout &a = *t[0], &w = *t[1], &out = *t[2];
        const TensorLayout *bias = t[3];
        MatmulProblem problem = matrix_problem(info, op, "W", "output", a, w, out, out.dtype());
        require_vector_unit(info, " for ACTIVATE");
        if (out.dtype() == DType::Int32 && a.dtype() != DType::Int8)
            refuse(op, "an int32 output needs int8 inputs");
        if (bias && (bias->dtype() != DType::Fp32 || bias->element_count() != w.size(1) ||
                     !bias->is_contiguous()))
            refuse(op, "bias " + bias->describe() + " must be " + std::to_string(w.size(1)) +
                           " densely packed fp32 values");
        problem.epilogue =
            MatmulEpilogue{.function = attributes.activation,
                           .out_type = out.dtype(),
                           .bias_addr = bias ? std::optional<std::uint64_t>(0) : std::nullopt,
                           .scale = attributes.scale};
        return problem;
    }
};

} // namespace

} // namespace detail

TPURT_KERNEL(detail::MatmulKernel);
TPURT_REGISTER_OP(matmul_op, MatmulOp);
TPURT_REGISTER_OP(dense_op, DenseOp);

using detail::DenseOp;
using detail::MatmulOp;

OpLaunch prepare_matmul(Device &device, const Tensor &a, const Tensor &b, const Tensor &c) {
    return detail::prepare<MatmulOp>(device, {&a, &b, &c});
}
MatmulStats matmul(Device &device, const Tensor &a, const Tensor &b, Tensor &c,
                   std::chrono::nanoseconds timeout) {
    return detail::run<MatmulOp>(device, {&a, &b, &c}, {}, timeout);
}
void matmul(Stream &stream, const Tensor &a, const Tensor &b, const Tensor &c) {
    detail::enqueue<MatmulOp>(stream, {&a, &b, &c});
}

OpLaunch prepare_dense(Device &device, const Tensor &a, const Tensor &w, const Tensor *bias,
                       const Tensor &out, Activation activation, float scale) {
    return detail::prepare<DenseOp>(device, {&a, &w, &out, bias}, {activation, scale});
}
MatmulStats dense(Device &device, const Tensor &a, const Tensor &w, const Tensor *bias, Tensor &out,
                  Activation activation, float scale, std::chrono::nanoseconds timeout) {
    return detail::run<DenseOp>(device, {&a, &w, &out, bias}, {activation, scale}, timeout);
}
void dense(Stream &stream, const Tensor &a, const Tensor &w, const Tensor *bias, const Tensor &out,
           Activation activation, float scale) {
    detail::enqueue<DenseOp>(stream, {&a, &w, &out, bias}, {activation, scale});
}

} // namespace tpurt
