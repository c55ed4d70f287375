// SPDX-License-Identifier: MIT
// slice_copy_op.cpp - the slice_copy op: out[..., dst_start + i, ...] = a[..., src_start + i,
// ...] for i < count along one axis, the rest of out left as it was. Concatenation (one copy per
// input at its offset), gathers of constant indices (a copy per run of neighbouring indices) and
// slices are sequences of it. Exact copies of any dtype: one block copy of `outer` rows of
// count x inner elements (codegen/block_copy.hpp), both sides densely packed.
#include "codegen/block_copy.hpp"
#include "exec/op_registry.hpp"
#include "ops/shape/dense_operand.hpp"

#include <string>

namespace tpurt {

namespace detail {

namespace {

struct SliceCopyProblem {
    DType type = DType::Fp32;
    std::uint64_t outer = 1, inner = 1;         // elements before and after the axis
    std::uint64_t a_length = 0, out_length = 0; // the axis's extent in a and in out
    std::uint64_t src_start = 0, dst_start = 0, count = 0;
    std::uint64_t a_addr = 0, dst_addr = 0;
};

struct SliceCopyKernel {
    using Problem = SliceCopyProblem;
    static constexpr const char *name = "slice_copy";

    static void bind(Problem &p, OpArguments &args) {
        const std::uint64_t size = element_size(p.type);
        args.bind(p.a_addr, "a", p.outer * p.a_length * p.inner * size);
        args.bind(p.dst_addr, "dst", p.outer * p.out_length * p.inner * size);
    }
    static std::vector<Program> compile(const Problem &p, const ArrayLimits &limits) {
        const std::uint64_t size = element_size(p.type);
        const BlockCopy block{.src = p.a_addr + p.src_start * p.inner * size,
                              .src_stride = p.a_length * p.inner * size,
                              .dst = p.dst_addr + p.dst_start * p.inner * size,
                              .dst_stride = p.out_length * p.inner * size,
                              .rows = static_cast<std::uint32_t>(p.outer),
                              .cols = static_cast<std::uint32_t>(p.count * p.inner)};
        return compile_block_copies(p.type, {&block, 1}, limits);
    }
    // "slice_copy fp32 2x[3 of 5 from 1]x4 to [at 0 of 3]".
    static std::string profile_name(const Problem &p) {
        return std::string("slice_copy ") + dtype_name(p.type) + " " + std::to_string(p.outer) +
               "x[" + std::to_string(p.count) + " of " + std::to_string(p.a_length) + " from " +
               std::to_string(p.src_start) + "]x" + std::to_string(p.inner) + " to [at " +
               std::to_string(p.dst_start) + " of " + std::to_string(p.out_length) + "]";
    }
};

struct SliceCopyOp {
    using Kernel = SliceCopyKernel;
    static constexpr const char *name = "slice_copy";
    static constexpr std::array<OpOperand, 2> operands{{{"a"}, {"out"}}};
    struct Attributes {
        std::uint64_t axis = 0;
        std::uint64_t src_start = 0;
        std::uint64_t dst_start = 0;
        std::uint64_t count = 0;
    };
    static constexpr std::array<const char *, 4> attributes{"axis", "src_start", "dst_start",
                                                            "count"};

    static SliceCopyProblem check(const DeviceInfo &, const Layouts<SliceCopyOp> &t,
                                  const Attributes &at) {
        const TensorLayout &a = *t[0], &out = *t[1];
        require_dense(name, "a", a);
        require_dense(name, "out", out);
        if (out.dtype() != a.dtype() || out.rank() != a.rank())
            refuse(name,
                   "out " + out.describe() + " must have a " + a.describe() + "'s dtype and rank");
        if (at.axis >= a.rank())
            refuse(name, "axis " + std::to_string(at.axis) + " is not one of " + a.describe() +
                             "'s " + std::to_string(a.rank()) + " axes");
        SliceCopyProblem p{.type = a.dtype(),
                           .a_length = a.size(at.axis),
                           .out_length = out.size(at.axis),
                           .src_start = at.src_start,
                           .dst_start = at.dst_start,
                           .count = at.count};
        for (std::size_t i = 0; i < a.rank(); ++i) {
            if (i != at.axis && a.size(i) != out.size(i))
                refuse(name, "out " + out.describe() + " must match " + a.describe() +
                                 " on every axis but " + std::to_string(at.axis));
            if (i < at.axis)
                p.outer *= a.size(i);
            else if (i > at.axis)
                p.inner *= a.size(i);
        }
        if (at.count == 0 || at.src_start > p.a_length || at.count > p.a_length - at.src_start ||
            at.dst_start > p.out_length || at.count > p.out_length - at.dst_start)
            refuse(name, "count " + std::to_string(at.count) + " from " +
                             std::to_string(at.src_start) + " into " +
                             std::to_string(at.dst_start) + " must lie inside both extents " +
                             std::to_string(p.a_length) + " and " + std::to_string(p.out_length) +
                             " of axis " + std::to_string(at.axis));
        if (p.outer > UINT32_MAX || p.count * p.inner > UINT32_MAX)
            refuse(name, "a " + a.describe() + " is too large");
        return p;
    }
};

} // namespace

} // namespace detail

TPURT_KERNEL(detail::SliceCopyKernel);
TPURT_REGISTER_OP(slice_copy_op, SliceCopyOp);

} // namespace tpurt
