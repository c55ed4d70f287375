// SPDX-License-Identifier: MIT
// permute_op.cpp - the permutation kernel (compile_permute() as an executable: a, dst) and the
// permute op on tensors: a's axes in any order, copied densely (see shape_ops.hpp).
#include "exec/op_registry.hpp"
#include "ops/shape/dense_operand.hpp"
#include "tpurt/codegen/axis_compiler.hpp"
#include "tpurt/ops/shape_ops.hpp"

#include <string>

namespace tpurt {

namespace detail {

namespace {

struct PermuteKernel {
    using Problem = PermuteProblem;
    static constexpr const char *name = "permute";

    static void bind(Problem &p, OpArguments &args) {
        std::uint64_t bytes = element_size(p.type);
        for (std::uint32_t extent : p.shape)
            bytes *= extent;
        args.bind(p.a_addr, "a", bytes);
        args.bind(p.dst_addr, "dst", bytes);
    }
    static std::vector<Program> compile(const Problem &p, const ArrayLimits &limits) {
        return compile_permute(p, limits);
    }
    // "permute fp32 4x5x6 to 2,0,1".
    static std::string profile_name(const Problem &p) {
        std::string shape, perm;
        for (std::size_t i = 0; i < p.shape.size(); ++i) {
            shape += (i ? "x" : "") + std::to_string(p.shape[i]);
            perm += (i ? "," : "") + std::to_string(p.perm[i]);
        }
        return std::string("permute ") + dtype_name(p.type) + " " + shape + " to " + perm;
    }
};

struct PermuteOp {
    using Kernel = PermuteKernel;
    static constexpr const char *name = "permute";
    static constexpr std::array<OpOperand, 2> operands{{{"a"}, {"out"}}};
    struct Attributes {
        std::vector<std::uint64_t> order;
    };
    static constexpr std::array<const char *, 1> attributes{"order"};

    static PermuteProblem check(const DeviceInfo &info, const Layouts<PermuteOp> &t,
                                const Attributes &attributes) {
        const TensorLayout &a = *t[0], &out = *t[1];
        require_vector_unit(info);
        require_dense(name, "a", a);
        require_dense(name, "out", out);
        PermuteProblem problem{.type = a.dtype(), .shape = {}, .perm = {}};
        const std::string wrong_order = "the order must name each of a " + a.describe() + "'s " +
                                        std::to_string(a.rank()) + " axes once";
        if (attributes.order.size() != a.rank())
            refuse(name, wrong_order);
        std::vector<bool> seen(a.rank(), false);
        std::vector<std::size_t> expected;
        for (std::uint64_t axis : attributes.order) {
            if (axis >= a.rank() || seen[axis])
                refuse(name, wrong_order);
            seen[axis] = true;
            problem.perm.push_back(static_cast<std::uint32_t>(axis));
            expected.push_back(a.size(axis));
        }
        for (std::size_t extent : a.shape())
            problem.shape.push_back(static_cast<std::uint32_t>(extent));
        if (out.dtype() != a.dtype() || out.shape() != expected)
            refuse(name, "out " + out.describe() + " must be a " + dtype_name(a.dtype()) +
                             " tensor of a " + a.describe() + "'s shape permuted");
        return problem;
    }
};

PermuteOp::Attributes order_of(std::span<const std::size_t> order) {
    return {std::vector<std::uint64_t>(order.begin(), order.end())};
}

} // namespace

} // namespace detail

TPURT_KERNEL(detail::PermuteKernel);
TPURT_REGISTER_OP(permute_op, PermuteOp);

using detail::order_of;
using detail::PermuteOp;

OpLaunch prepare_permute(Device &device, const Tensor &a, std::span<const std::size_t> order,
                         const Tensor &out) {
    return detail::prepare<PermuteOp>(device, {&a, &out}, order_of(order));
}
MatmulStats permute(Device &device, const Tensor &a, std::span<const std::size_t> order,
                    Tensor &out, std::chrono::nanoseconds timeout) {
    return detail::run<PermuteOp>(device, {&a, &out}, order_of(order), timeout);
}
void permute(Stream &stream, const Tensor &a, std::span<const std::size_t> order,
             const Tensor &out) {
    detail::enqueue<PermuteOp>(stream, {&a, &out}, order_of(order));
}

} // namespace tpurt
