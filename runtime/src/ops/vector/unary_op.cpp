// SPDX-License-Identifier: MIT
// unary_op.cpp - the unary kernel (compile_unary() as an executable: a, dst) and the unary op
// on tensors: out = f(scale x a) with ACTIVATE's functions, or a cast with f none.
#include "exec/op_registry.hpp"
#include "tpurt/codegen/vector_compiler.hpp"
#include "tpurt/ops/tensor_ops.hpp"

#include <string>

namespace tpurt {

namespace detail {

namespace {

struct UnaryKernel {
    using Problem = UnaryProblem;
    static constexpr const char *name = "unary";

    static void bind(Problem &p, OpArguments &args) {
        args.bind(p.a_addr, "a", p.elements * element_size(p.type));
        args.bind(p.dst_addr, "dst", p.elements * element_size(p.out_type));
    }
    static std::vector<Program> compile(const Problem &p, const ArrayLimits &limits) {
        return compile_unary(p, limits);
    }
    // "relu fp32->bf16 4096", "cast fp32->int8 4096".
    static std::string profile_name(const Problem &p) {
        return std::string(p.function == Activation::None ? "cast" : activation_name(p.function)) +
               " " + dtype_name(p.type) + "->" + dtype_name(p.out_type) + " " +
               std::to_string(p.elements);
    }
};

struct UnaryOp {
    using Kernel = UnaryKernel;
    static constexpr const char *name = "unary";
    static constexpr std::array<OpOperand, 2> operands{{{"a"}, {"out"}}};
    struct Attributes {
        Activation function = Activation::None;
        float scale = 1.0f;
    };
    static constexpr std::array<const char *, 2> attributes{"function", "scale"};

    static UnaryProblem check(const DeviceInfo &info, const Layouts<UnaryOp> &t,
                              const Attributes &attributes) {
        const std::string op = std::string("unary ") + activation_name(attributes.function);
        const TensorLayout &a = *t[0], &out = *t[1];
        require_matrix_unit(info, a.dtype());
        require_vector_unit(info);
        if (const unsigned cap = activation_cap(attributes.function); (info.caps & cap) != cap)
            throw Error(ErrorCode::Unsupported,
                        op + ": this card has no ACTIVATE " + activation_name(attributes.function) +
                            (cap == TPU_CAP_ACT_ERF ? " (spec 2.3)" : " (spec 1.4)"));
        if (!is_matmul_input(a.dtype()))
            refuse(op, "a is " + a.describe() + ": functions apply to int8, bf16 or fp32");
        if (!a.is_contiguous() || !out.is_contiguous() || out.shape() != a.shape())
            refuse(op, "a " + a.describe() + " and out " + out.describe() +
                           " must be densely packed with one shape");
        return {.type = a.dtype(),
                .out_type = out.dtype(),
                .function = attributes.function,
                .scale = attributes.scale,
                .elements = a.element_count()};
    }
};

} // namespace

} // namespace detail

TPURT_KERNEL(detail::UnaryKernel);
TPURT_REGISTER_OP(unary_op, UnaryOp);

using detail::UnaryOp;

OpLaunch prepare_unary(Device &device, Activation function, const Tensor &a, const Tensor &out,
                       float scale) {
    return detail::prepare<UnaryOp>(device, {&a, &out}, {function, scale});
}
MatmulStats unary(Device &device, Activation function, const Tensor &a, Tensor &out, float scale,
                  std::chrono::nanoseconds timeout) {
    return detail::run<UnaryOp>(device, {&a, &out}, {function, scale}, timeout);
}
void unary(Stream &stream, Activation function, const Tensor &a, const Tensor &out, float scale) {
    detail::enqueue<UnaryOp>(stream, {&a, &out}, {function, scale});
}

} // namespace tpurt
