// SPDX-License-Identifier: MIT
// slicing.cpp - a Slice node's span of its input (slicing.hpp).
#include "tpumodel/slicing.hpp"

#include "kernel_support.hpp"

#include <algorithm>

namespace tpumodel::cpu {

SliceSpan slice_span(const Node &node, const std::vector<std::int64_t> &shape,
                     const Tensor *starts_in, const Tensor *ends_in, const Tensor *axes_in,
                     const Tensor *steps_in) {
    const std::size_t rank = shape.size();
    const std::vector<std::int64_t> starts = ints_of(node, starts_in, "starts");
    const std::vector<std::int64_t> ends = ints_of(node, ends_in, "ends");
    std::vector<std::int64_t> axes(starts.size()), steps(starts.size(), 1);
    for (std::size_t i = 0; i < axes.size(); ++i)
        axes[i] = std::int64_t(i);
    if (axes_in)
        axes = ints_of(node, axes_in, "axes");
    if (steps_in)
        steps = ints_of(node, steps_in, "steps");
    if (ends.size() != starts.size() || axes.size() != starts.size() ||
        steps.size() != starts.size())
        throw KernelError(node, "starts, ends, axes and steps differ in length");
    SliceSpan s{std::vector<std::int64_t>(rank, 0), std::vector<std::int64_t>(rank, 1), shape};
    for (std::size_t i = 0; i < axes.size(); ++i) {
        const std::size_t a = normalise_axis(node, axes[i], rank);
        const std::int64_t dim = shape[a], st = steps[i];
        if (st == 0)
            throw KernelError(node, "a step of 0");
        auto clamp = [&](std::int64_t v, std::int64_t lo, std::int64_t hi) {
            v = v < 0 ? v + dim : v;
            return std::clamp(v, lo, hi);
        };
        const std::int64_t b = st > 0 ? clamp(starts[i], 0, dim) : clamp(starts[i], -1, dim - 1);
        const std::int64_t e = st > 0 ? clamp(ends[i], 0, dim) : clamp(ends[i], -1, dim - 1);
        s.first[a] = b;
        s.step[a] = st;
        s.shape[a] = st > 0 ? std::max<std::int64_t>((e - b + st - 1) / st, 0)
                            : std::max<std::int64_t>((b - e - st - 1) / -st, 0);
    }
    return s;
}

OneAxisRun one_axis_run(const SliceSpan &span, const std::vector<std::int64_t> &shape) {
    OneAxisRun run;
    bool cut = false;
    for (std::size_t a = 0; a < shape.size(); ++a) {
        if (span.first[a] == 0 && span.step[a] == 1 && span.shape[a] == shape[a])
            continue;
        if (cut)
            return {0, "a slice along several axes: the card copies along one"};
        if (span.step[a] != 1)
            return {0, "a step of " + std::to_string(span.step[a]) +
                           ": the card copies runs of neighbours"};
        cut = true;
        run.axis = a;
    }
    return run;
}

} // namespace tpumodel::cpu
