// SPDX-License-Identifier: MIT
// reduce_kernels.cpp - the reference kernels of ReduceMean, ReduceSum, ReduceSumSquare,
// ReduceMax and ReduceMin (opset 17:
// axes as an attribute, ReduceSum's as an input; keepdims; noop_with_empty_axes), in binary32
// with sums in index order.
#include "kernel_support.hpp"
#include "tpumodel/reduction.hpp"

#include <algorithm>
#include <limits>

namespace tpumodel::cpu {

namespace {

using Inputs = std::span<const Tensor *const>;
using Outputs = std::span<Tensor *const>;

void reduce_kernel(const Node &node, Inputs in, Outputs out) {
    if (in.empty() || !in[0])
        throw KernelError(node, "its data input is missing");
    const Tensor &x = input(node, in, 0);
    require_plain(node, x);
    if (x.dtype != DType::Float && x.dtype != DType::Bfloat16)
        throw KernelError(node, std::string("takes floats, not ") + dtype_name(x.dtype));
    const std::size_t rank = x.shape.size();
    const std::vector<bool> reduced =
        reduced_axes(node, rank, in.size() > 1 && in[1] ? in[1] : nullptr);
    const bool keep = node.get_int("keepdims", 1) != 0;
    std::vector<std::int64_t> shape;
    for (std::size_t i = 0; i < rank; ++i)
        if (!reduced[i] || keep)
            shape.push_back(reduced[i] ? 1 : x.shape[i]);

    const bool is_max = node.op == "ReduceMax", is_min = node.op == "ReduceMin";
    const bool is_mean = node.op == "ReduceMean";
    const bool is_square = node.op == "ReduceSumSquare";
    std::uint64_t outputs = 1, count = 1;
    for (std::size_t i = 0; i < rank; ++i)
        (reduced[i] ? count : outputs) *= std::uint64_t(x.shape[i]);
    const float inf = std::numeric_limits<float>::infinity();
    std::vector<float> acc(outputs, is_max ? -inf : is_min ? inf : 0.0f);
    std::vector<std::int64_t> pos(rank, 0);
    for (std::uint64_t i = 0; i < x.element_count(); ++i) {
        std::uint64_t o = 0;
        for (std::size_t d = 0; d < rank; ++d)
            if (!reduced[d])
                o = o * std::uint64_t(x.shape[d]) + std::uint64_t(pos[d]);
        const auto r = float(real_at(x, i));
        const float v = is_square ? r * r : r;
        acc[o] = is_max ? std::max(acc[o], v) : is_min ? std::min(acc[o], v) : acc[o] + v;
        for (std::size_t d = rank; d-- > 0;) {
            if (++pos[d] < x.shape[d])
                break;
            pos[d] = 0;
        }
    }
    Tensor &y = *out[0];
    shape_output(y, x.dtype, shape);
    for (std::uint64_t o = 0; o < outputs; ++o)
        store(y, o, is_mean ? acc[o] / float(count) : acc[o], 0);
}

} // namespace

void add_reduce_kernels(KernelTable &table) {
    table["ReduceMean"] = reduce_kernel;
    table["ReduceSum"] = reduce_kernel;
    table["ReduceMax"] = reduce_kernel;
    table["ReduceMin"] = reduce_kernel;
    table["ReduceSumSquare"] = reduce_kernel;
}

} // namespace tpumodel::cpu
