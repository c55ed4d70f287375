// SPDX-License-Identifier: MIT
// report.cpp - the compiler's report, after edgetpu_compiler's: what was compiled, then per op
// (fused ones as "Conv+Relu") and placement the count and the card op, then every CPU node
// with the reason it is not on the card.
#include "passes.hpp"

#include <cstdio>
#include <map>
#include <tuple>

namespace tpu_onnx {

std::string op_label(const tpumodel::Node &n) {
    const std::string act = n.get_string("activation", "");
    return act.empty() ? n.op : n.op + "+" + act;
}

std::string report(const Compiled &c) {
    const tpumodel::Model &m = c.model;
    const CompileSummary &s = c.summary;
    std::string out;
    auto line = [&](const char *fmt, auto... args) {
        char buf[512];
        std::snprintf(buf, sizeof buf, fmt, args...);
        out += buf;
    };
    line("tpu-compile: %s (opset %lld", s.source.c_str(), (long long)s.source_opset);
    out += s.source_opset == target_opset ? ")" : ", converted to 17)";
    line(", precision %s\n", tpumodel::precision_name(m.precision));
    for (std::uint32_t id : m.inputs)
        line("  input  %-24s %-8s %s\n", m.tensors[id].name.c_str(),
             tpumodel::dtype_name(m.tensors[id].dtype), m.tensors[id].shape_string().c_str());
    for (std::uint32_t id : m.outputs)
        line("  output %-24s %-8s %s\n", m.tensors[id].name.c_str(),
             tpumodel::dtype_name(m.tensors[id].dtype), m.tensors[id].shape_string().c_str());

    std::size_t on_card = 0;
    std::map<std::tuple<std::string, std::string, std::string>, std::size_t> rows;
    for (const tpumodel::Node &n : m.nodes) {
        on_card += n.placement == tpumodel::Placement::Card;
        ++rows[{op_label(n), tpumodel::placement_name(n.placement), n.card_op}];
    }
    line("%zu ONNX nodes: %zu folded into constants, %zu BatchNormalizations into convolutions, "
         "%zu ReLUs fused, %zu layout transposes added;\n%zu nodes run: %zu on the card, %zu on "
         "the CPU\n\n",
         s.onnx_nodes, s.folded, s.batchnorms, s.fused, s.transposes, m.nodes.size(), on_card,
         m.nodes.size() - on_card);
    if (s.axes_moved)
        line("%zu (Log)Softmax nodes moved to the last axis between two transposes\n\n",
             s.axes_moved);
    line("%-22s %6s  %-9s %s\n", "Operator", "Count", "Placement", "Card op");
    for (const auto &[key, count] : rows) {
        const auto &[op, placement, card_op] = key;
        line("%-22s %6zu  %-9s %s\n", op.c_str(), count, placement.c_str(),
             card_op.empty() ? "-" : card_op.c_str());
    }
    if (on_card < m.nodes.size()) {
        out += "\nOn the CPU:\n";
        for (const tpumodel::Node &n : m.nodes)
            if (n.placement == tpumodel::Placement::Cpu)
                line("  %s: %s\n", n.describe().c_str(), n.reason.c_str());
    }
    return out;
}

} // namespace tpu_onnx
