// SPDX-License-Identifier: MIT
// placement.cpp - every node on the card or the CPU, the first backend that can run it (as
// Glow's partitioner and TVM's BYOC do): the card when libtpurt has an op for it in this form
// (the op's name from runtime/src/ops/registered_ops.def, or "view" for a reshape of a dense
// tensor, which moves nothing), else the CPU when a reference kernel exists, with the reason
// the card cannot take it and the kernel takes the node's form (tried once on zeros); a node
// with neither is refused, naming it.
#include "placement_rules.hpp"

#include "passes.hpp"

#include <tpumodel/cpu_executor.hpp>
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
        try {
            tpumodel::cpu::check_node_runs(m, n);
        } catch (const tpumodel::cpu::KernelError &e) {
            throw CompileError(n.describe() + ": unsupported: " + d.reason +
                               ", and the CPU kernel cannot run it: " + e.reason());
        }
        n.placement = tpumodel::Placement::Cpu;
        n.card_op.clear();
        n.reason = d.reason;
    }
}

} // namespace tpu_onnx
