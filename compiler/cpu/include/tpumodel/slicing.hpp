// SPDX-License-Identifier: MIT
// slicing.hpp - what a Slice node takes of its input (opset 13: starts, ends, optional axes and
// steps as inputs, clamped as numpy does): for every axis the first index, the step and the
// count. Shared by the CPU kernel, tpu-compile's placement and the card executor, so the three
// agree on a node's meaning.
#pragma once

#include "tpumodel/model.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace tpumodel::cpu {

struct SliceSpan {
    std::vector<std::int64_t> first; // per axis: the first index taken
    std::vector<std::int64_t> step;  // per axis: the step (1 on axes the node leaves whole)
    std::vector<std::int64_t> shape; // per axis: how many are taken (the output's shape)
};

// The span of a Slice of an input of `shape`, from its starts, ends, axes and steps inputs
// (axes and steps may be null: absent). Throws KernelError for missing or mismatched inputs, an
// axis out of range or a step of 0.
SliceSpan slice_span(const Node &node, const std::vector<std::int64_t> &shape, const Tensor *starts,
                     const Tensor *ends, const Tensor *axes, const Tensor *steps);

// A span as one run of neighbours along one axis (the card's slice_copy): `axis` (0 when the
// span cuts none), or why not (`why` non-empty: several axes cut, or a step other than 1).
struct OneAxisRun {
    std::size_t axis = 0;
    std::string why;
};
OneAxisRun one_axis_run(const SliceSpan &span, const std::vector<std::int64_t> &shape);

} // namespace tpumodel::cpu
