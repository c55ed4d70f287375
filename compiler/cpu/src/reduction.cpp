// SPDX-License-Identifier: MIT
// reduction.cpp - a Reduce node's reduced axes and their [outer, length, inner] view
// (reduction.hpp).
#include "tpumodel/reduction.hpp"

#include "kernel_support.hpp"

#include <algorithm>

namespace tpumodel::cpu {

std::vector<bool> reduced_axes(const Node &node, std::size_t rank, const Tensor *axes) {
    std::vector<std::int64_t> list = node.get_ints("axes", {});
    if (axes)
        list = ints_of(node, axes, "axes");
    std::vector<bool> reduced(rank, list.empty() && node.get_int("noop_with_empty_axes", 0) == 0);
    for (std::int64_t a : list)
        reduced[normalise_axis(node, a, rank)] = true;
    return reduced;
}

std::optional<AxisRun> contiguous_run(const std::vector<std::int64_t> &shape,
                                      const std::vector<bool> &reduced) {
    std::size_t first = shape.size(), last = 0;
    for (std::size_t i = 0; i < shape.size(); ++i)
        if (reduced[i]) {
            first = std::min(first, i);
            last = i;
        }
    if (first == shape.size())
        return std::nullopt;
    AxisRun run;
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i > first && i < last && !reduced[i])
            return std::nullopt;
        (i < first ? run.outer : i > last ? run.inner : run.length) *= std::uint64_t(shape[i]);
    }
    return run;
}

} // namespace tpumodel::cpu
