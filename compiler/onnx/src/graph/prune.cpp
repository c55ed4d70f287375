// SPDX-License-Identifier: MIT
// prune.cpp - the tensors nothing uses any more (folded-away intermediates, weights replaced
// by their converted copies) dropped, and the remaining ids renumbered in their old order.
#include "passes.hpp"

namespace tpu_onnx {

void prune(tpumodel::Model &m) {
    std::vector<bool> used(m.tensors.size(), false);
    for (std::uint32_t id : m.inputs)
        used[id] = true;
    for (std::uint32_t id : m.outputs)
        used[id] = true;
    for (const tpumodel::Node &n : m.nodes) {
        for (std::uint32_t id : n.inputs)
            if (id != tpumodel::no_tensor)
                used[id] = true;
        for (std::uint32_t id : n.outputs)
            used[id] = true;
    }
    std::vector<std::uint32_t> renumber(m.tensors.size(), tpumodel::no_tensor);
    std::vector<tpumodel::Tensor> kept;
    for (std::size_t i = 0; i < m.tensors.size(); ++i)
        if (used[i]) {
            renumber[i] = std::uint32_t(kept.size());
            kept.push_back(std::move(m.tensors[i]));
        }
    m.tensors = std::move(kept);
    auto apply = [&](std::vector<std::uint32_t> &ids) {
        for (std::uint32_t &id : ids)
            if (id != tpumodel::no_tensor)
                id = renumber[id];
    };
    apply(m.inputs);
    apply(m.outputs);
    for (tpumodel::Node &n : m.nodes) {
        apply(n.inputs);
        apply(n.outputs);
    }
}

} // namespace tpu_onnx
