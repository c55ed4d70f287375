// SPDX-License-Identifier: MIT
// kernel_support.hpp - what the reference kernels share: typed views of tensor data, integer
// inputs (shapes, axes) read whatever their integer dtype, axis normalisation, and the
// registration functions of each kernel family.
#pragma once

#include "tpumodel/cpu_kernels.hpp"
#include "tpumodel/window.hpp"

#include <cstring>
#include <map>
#include <vector>

namespace tpumodel::cpu {

using KernelTable = std::map<std::string, Kernel, std::less<>>;
void add_shape_kernels(KernelTable &table);
void add_elementwise_kernels(KernelTable &table);
void add_nn_kernels(KernelTable &table);
void add_reduce_kernels(KernelTable &table);
void add_norm_kernels(KernelTable &table);
void add_quant_kernels(KernelTable &table);

// Stores v as element i of t's dtype (rounded to nearest even for bfloat16).
void store(Tensor &t, std::uint64_t i, double v, std::int64_t iv);

// The elements of an integer tensor (shapes, axes, indices).
std::vector<std::int64_t> ints_of(const Node &node, const Tensor *t, const char *what);
// axis in [-rank, rank) to [0, rank); refused otherwise.
std::size_t normalise_axis(const Node &node, std::int64_t axis, std::size_t rank);
// Input i, refused when the node has fewer inputs or it was left out.
const Tensor &input(const Node &node, std::span<const Tensor *const> in, std::size_t i);
// The input's data must be in ONNX's order.
void require_plain(const Node &node, const Tensor &t);
// Sizes output `t` for `shape` and `dtype` (zeroed data).
void shape_output(Tensor &t, DType dtype, std::vector<std::int64_t> shape);

} // namespace tpumodel::cpu
