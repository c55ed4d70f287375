// SPDX-License-Identifier: MIT
// cpu_executor.hpp - a whole compiled model run on the CPU with the reference kernels, card
// nodes included: the reference a run on the card is checked against, and what tests use to
// show that the compiler's rewrites (layouts, folded weights, fusion) keep the model's values.
#pragma once

#include "tpumodel/model.hpp"

#include <functional>
#include <optional>
#include <vector>

namespace tpumodel::cpu {

// What runs one node on its inputs (one per input, null for a left-out one): run_node() by
// default, or another model of the arithmetic (card_reference.hpp's).
using NodeRunner =
    std::function<std::vector<Tensor>(const Node &n, const std::vector<const Tensor *> &in)>;

// The graph outputs for `inputs` (one per graph input, in order, of its dtype and shape, in
// ONNX's order), each node run by `run` (empty: run_node()). Throws KernelError naming the
// node that cannot run, or std::invalid_argument for inputs that do not match.
std::vector<Tensor> run_model(const Model &m, const std::vector<Tensor> &inputs,
                              const NodeRunner &run = {});
// The same run's every value: per tensor id, its value in this run (graph inputs and node
// outputs; nothing for constants, which are the model's).
std::vector<std::optional<Tensor>> run_values(const Model &m, const std::vector<Tensor> &inputs,
                                              const NodeRunner &run = {});

// Node `n` of `m` run by its kernel on `in` (one per input, null for a left-out one): its
// outputs named, typed, shaped and laid out as the model declares them (KernelError if the
// kernel gives other dtypes or shapes). The card's executor runs its CPU nodes with it.
std::vector<Tensor> run_node(const Model &m, const Node &n, const std::vector<const Tensor *> &in);

// Stand-ins for node `n`'s inputs to try its kernel with: constants as they are, data inputs as
// zeros of their declared shapes (`in` points into `zeros`). Nothing when zeros would prove
// nothing: an input of unknown shape, more than 2^24 elements in all, or integers (shapes, axes,
// indices) computed at run time.
struct ZeroInputs {
    std::vector<Tensor> zeros;
    std::vector<const Tensor *> in;
};
std::optional<ZeroInputs> zero_inputs(const Model &m, const Node &n);

// Whether the CPU kernel takes node `n` of `m` in its form: runs it once on zeros of its inputs'
// declared shapes (constants as they are) and checks the outputs' dtypes and shapes against
// the declared ones. Throws KernelError saying why not. A node zero_inputs() gives nothing for
// is not tried.
void check_node_runs(const Model &m, const Node &n);

} // namespace tpumodel::cpu
