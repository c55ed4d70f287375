// SPDX-License-Identifier: MIT
// fuse.cpp - a Conv or Gemm whose output's only reader is a Relu (and not a graph output)
// takes the Relu into its epilogue: one node with attribute activation = "Relu" writing the
// Relu's output, as the card's conv2d_layer and dense ops run it.
#include "passes.hpp"

#include <algorithm>

namespace tpu_onnx {

void fuse(tpumodel::Model &m, CompileSummary &summary) {
    std::vector<std::size_t> readers(m.tensors.size(), 0);
    for (const tpumodel::Node &n : m.nodes)
        for (std::uint32_t id : n.inputs)
            if (id != tpumodel::no_tensor)
                ++readers[id];
    for (std::uint32_t id : m.outputs)
        ++readers[id];

    std::vector<tpumodel::Node> nodes;
    for (tpumodel::Node &n : m.nodes) {
        if (n.op == "Relu" && !nodes.empty()) {
            tpumodel::Node &p = nodes.back();
            const bool fusable = (p.op == "Conv" || p.op == "Gemm") && !p.find("activation") &&
                                 p.outputs.size() == 1 && n.inputs.size() == 1 &&
                                 n.inputs[0] == p.outputs[0] && readers[p.outputs[0]] == 1;
            if (fusable) {
                p.set("activation", std::string("Relu"));
                p.outputs = n.outputs;
                ++summary.fused;
                continue;
            }
        }
        nodes.push_back(std::move(n));
    }
    m.nodes = std::move(nodes);
}

} // namespace tpu_onnx
