// SPDX-License-Identifier: MIT
// reduction.hpp - which axes a ReduceMean, ReduceSum or ReduceMax node reduces (opset 17: axes
// as an attribute, ReduceSum's as an input; no axes means every axis unless
// noop_with_empty_axes), and the [outer, length, inner] view that makes a reduction over
// contiguous axes one reduction over the middle axis. Shared by the CPU kernels, tpu-compile's
// placement and the card executor, so the three agree on a node's meaning.
#pragma once

#include "tpumodel/model.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace tpumodel::cpu {

// reduced[i]: axis i of a rank-`rank` input is reduced. `axes` is the node's axes input (null:
// absent or left out). Throws KernelError for an axis outside [-rank, rank).
std::vector<bool> reduced_axes(const Node &node, std::size_t rank, const Tensor *axes);

// A shape seen as [outer, length, inner] around a run of reduced axes.
struct AxisRun {
    std::uint64_t outer = 1, length = 1, inner = 1;
};

// The view of `shape` whose middle axis is the reduced ones; nullopt when they are not one
// contiguous run (or none is reduced).
std::optional<AxisRun> contiguous_run(const std::vector<std::int64_t> &shape,
                                      const std::vector<bool> &reduced);

} // namespace tpumodel::cpu
