// SPDX-License-Identifier: MIT
// elementwise_op.cpp - the elementwise kernel (compile_elementwise() as an executable: a, b,
// dst) and the elementwise op on tensors: out = a op b, b of a's shape or one row broadcast.
#include "exec/op_registry.hpp"
#include "ops/vector/rows.hpp"
#include "tpurt/codegen/vector_compiler.hpp"
#include "tpurt/ops/tensor_ops.hpp"

#include <string>

namespace tpurt {

namespace detail {

namespace {

const char *vector_op_name(VectorOp op) {
    switch (op) {
    case VectorOp::Add:
        return "add";
    case VectorOp::Sub:
        return "sub";
    case VectorOp::Mul:
        return "mul";
    case VectorOp::Max:
        return "max";
    case VectorOp::Min:
        return "min";
    case VectorOp::Div:
        return "div";
    case VectorOp::Gate:
        return "gate";
    case VectorOp::Gt:
        return "gt";
    case VectorOp::Eq:
        return "eq";
    }
    return "?";
}

struct ElementwiseKernel {
    using Problem = ElementwiseProblem;
    static constexpr const char *name = "elementwise";

    static void bind(Problem &p, OpArguments &args) {
        const std::uint64_t row = std::uint64_t{p.cols} * element_size(p.type);
        const auto extent = [&](std::uint64_t &stride) {
            return (p.rows - 1) * spelled_out(stride, row) + row;
        };
        if (p.broadcast_b)
            p.b_stride = 0; // one row: no stride
        args.bind(p.a_addr, "a", extent(p.a_stride));
        args.bind(p.b_addr, "b", p.broadcast_b ? row : extent(p.b_stride));
        args.bind(p.dst_addr, "dst", extent(p.dst_stride));
    }
    static std::vector<Program> compile(const Problem &p, const ArrayLimits &limits) {
        return compile_elementwise(p, limits);
    }
    // "add fp32 64x128", "mul bf16 64x128 row-broadcast".
    static std::string profile_name(const Problem &p) {
        return std::string(vector_op_name(p.op)) + " " + dtype_name(p.type) + " " +
               std::to_string(p.rows) + "x" + std::to_string(p.cols) +
               (p.broadcast_b ? " row-broadcast" : "");
    }
};

struct ElementwiseOp {
    using Kernel = ElementwiseKernel;
    static constexpr const char *name = "elementwise";
    static constexpr std::array<OpOperand, 3> operands{{{"a"}, {"b"}, {"out"}}};
    struct Attributes {
        VectorOp op = VectorOp::Add;
    };
    static constexpr std::array<const char *, 1> attributes{"op"};

    static ElementwiseProblem check(const DeviceInfo &info, const Layouts<ElementwiseOp> &t,
                                    const Attributes &attributes) {
        const std::string op = "elementwise op";
        const TensorLayout &a = *t[0], &b = *t[1], &out = *t[2];
        require_vector_unit(info);
        if (b.dtype() != a.dtype() || out.dtype() != a.dtype())
            refuse(op, "a " + a.describe() + ", b " + b.describe() + " and out " + out.describe() +
                           " must have one dtype");
        if (out.shape() != a.shape())
            refuse(op, "out " + out.describe() + " does not have a's shape " + a.describe());
        const Rows ra = rows_of(op, "a", a), rb = rows_of(op, "b", b), ro = rows_of(op, "out", out);
        const bool broadcast = rb.rows == 1 && ra.rows > 1;
        // One row against one row ([C] against [1, C], say) needs no broadcast.
        const bool same = b.shape() == a.shape() || (rb.rows == 1 && ra.rows == 1);
        if (rb.cols != ra.cols || (!broadcast && !same))
            refuse(op, "b " + b.describe() + " is neither a's shape " + a.describe() +
                           " nor its last dimension");
        return {.type = a.dtype(),
                .op = attributes.op,
                .rows = ra.rows,
                .cols = ra.cols,
                .broadcast_b = broadcast,
                .a_stride = ra.stride,
                .b_stride = broadcast ? 0 : rb.stride,
                .dst_stride = ro.stride};
    }
};

} // namespace

} // namespace detail

TPURT_KERNEL(detail::ElementwiseKernel);
TPURT_REGISTER_OP(elementwise_op, ElementwiseOp);

using detail::ElementwiseOp;

OpLaunch prepare_elementwise(Device &device, VectorOp op, const Tensor &a, const Tensor &b,
                             const Tensor &out) {
    return detail::prepare<ElementwiseOp>(device, {&a, &b, &out}, {op});
}
MatmulStats elementwise(Device &device, VectorOp op, const Tensor &a, const Tensor &b, Tensor &out,
                        std::chrono::nanoseconds timeout) {
    return detail::run<ElementwiseOp>(device, {&a, &b, &out}, {op}, timeout);
}
void elementwise(Stream &stream, VectorOp op, const Tensor &a, const Tensor &b, const Tensor &out) {
    detail::enqueue<ElementwiseOp>(stream, {&a, &b, &out}, {op});
}

} // namespace tpurt
