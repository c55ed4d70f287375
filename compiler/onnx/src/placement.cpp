// SPDX-License-Identifier: MIT
// placement.cpp - every node on the card or the CPU, the first backend that can run it (as
// Glow's partitioner and TVM's BYOC do): the card when libtpurt has an op for it in this form
// (the op's name from runtime/src/ops/registered_ops.def, or "view" for a reshape of a dense
// tensor, which moves nothing), else the CPU when a reference kernel exists, with the reason
// the card cannot take it; a node with neither is refused, naming it.
#include "placement_rules.hpp"

#include "passes.hpp"

#include <tpumodel/cpu_kernels.hpp>

namespace tpu_onnx {

void place(tpumodel::Model &m) {
    for (tpumodel::Node &n : m.nodes) {
        const CardDecision d = card_decision(m, n);
        if (!d.card_op.empty()) {
            n.placement = tpumodel::Placement::Card;
            n.card_op = d.card_op;
            n.reason.clear();
            continue;
        }
        if (!tpumodel::cpu::find_kernel(n.op))
            throw CompileError(n.describe() + ": unsupported: " + d.reason +
                               ", and there is no CPU kernel for " + n.op);
        n.placement = tpumodel::Placement::Cpu;
        n.card_op.clear();
        n.reason = d.reason;
    }
}

} // namespace tpu_onnx
