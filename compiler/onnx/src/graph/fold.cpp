// SPDX-License-Identifier: MIT
// fold.cpp - constant folding: in graph order, a node whose inputs are all constants, or a
// Shape or Size of a tensor whose shape is static, is evaluated by its CPU reference kernel and
// replaced by the constants it computes (so PyTorch's Shape -> Gather -> Unsqueeze -> Concat ->
// Reshape chains collapse into a Reshape by a constant shape). Afterwards every tensor's shape must
// be static and of sane size: the compiler's check for dynamic shapes it cannot fix.
#include "passes.hpp"

#include <tpumodel/cpu_executor.hpp>
#include <tpumodel/cpu_kernels.hpp>

#include <algorithm>
#include <optional>

namespace tpu_onnx {

namespace {

using tpumodel::Node;
using tpumodel::Tensor;

bool shape_known(const Tensor &t) {
    return std::all_of(t.shape.begin(), t.shape.end(), [](std::int64_t d) { return d >= 0; });
}

bool foldable(const tpumodel::Model &m, const Node &n) {
    if (n.inputs.empty() || !tpumodel::cpu::find_kernel(n.op))
        return false;
    if (n.op == "Shape" || n.op == "Size")
        return n.inputs[0] != tpumodel::no_tensor && shape_known(m.tensors[n.inputs[0]]);
    return std::all_of(n.inputs.begin(), n.inputs.end(), [&](std::uint32_t id) {
        return id == tpumodel::no_tensor || m.tensors[id].constant;
    });
}

// `n`'s outputs computed by its kernel from `in`, whatever their shapes; nothing when the kernel
// cannot run it in this form.
std::optional<std::vector<Tensor>> run_kernel(const Node &n,
                                              const std::vector<const Tensor *> &in) {
    std::vector<Tensor> results(n.outputs.size());
    std::vector<Tensor *> out;
    for (Tensor &t : results)
        out.push_back(&t);
    try {
        tpumodel::cpu::find_kernel(n.op)(n, in, out);
    } catch (const tpumodel::cpu::KernelError &) {
        return std::nullopt;
    }
    return results;
}

// Folds `n` into constants; false (and the model untouched) when its kernel cannot run it in
// this form, which leaves the node to placement like any other.
bool evaluate(tpumodel::Model &m, const Node &n) {
    std::vector<const Tensor *> in;
    for (std::uint32_t id : n.inputs)
        in.push_back(id == tpumodel::no_tensor ? nullptr : &m.tensors[id]);
    std::optional<std::vector<Tensor>> results = run_kernel(n, in);
    if (!results)
        return false;
    for (std::size_t i = 0; i < results->size(); ++i) {
        Tensor &t = m.tensors[n.outputs[i]];
        Tensor &r = (*results)[i];
        if (shape_known(t) && t.shape != r.shape)
            throw CompileError(n.describe() + ": folding it gave '" + t.name + "' the shape " +
                               r.shape_string() + ", shape inference " + t.shape_string());
        const std::string name = t.name;
        t = std::move(r);
        t.name = name;
        t.constant = true;
    }
    return true;
}

// Gives `n`'s outputs of unknown shape the shapes its kernel computes on stand-ins for its inputs
// (tpumodel::cpu::zero_inputs); nothing changes when there are none or the kernel cannot run it.
void infer_by_running(tpumodel::Model &m, const Node &n) {
    const bool unknown = std::any_of(n.outputs.begin(), n.outputs.end(),
                                     [&](std::uint32_t id) { return !shape_known(m.tensors[id]); });
    if (!unknown || !tpumodel::cpu::find_kernel(n.op))
        return;
    const std::optional<tpumodel::cpu::ZeroInputs> z = tpumodel::cpu::zero_inputs(m, n);
    if (!z)
        return;
    const std::optional<std::vector<Tensor>> results = run_kernel(n, z->in);
    if (!results)
        return;
    for (std::size_t i = 0; i < results->size(); ++i)
        if (!shape_known(m.tensors[n.outputs[i]]))
            m.tensors[n.outputs[i]].shape = (*results)[i].shape;
}

} // namespace

void fold_constants(tpumodel::Model &m, CompileSummary &summary) {
    std::vector<Node> kept;
    for (Node &n : m.nodes) {
        if (foldable(m, n) && evaluate(m, n)) {
            ++summary.folded;
        } else {
            infer_by_running(m, n);
            kept.push_back(std::move(n));
        }
    }
    m.nodes = std::move(kept);

    for (const Node &n : m.nodes)
        for (std::uint32_t id : n.outputs) {
            const Tensor &t = m.tensors[id];
            if (!shape_known(t))
                throw CompileError(n.describe() + ": output '" + t.name + "' has a dynamic shape " +
                                   t.shape_string() +
                                   " (-1: unknown) that shape inference and constant folding "
                                   "could not fix; tpu-compile needs static shapes");
            std::uint64_t count = 1;
            for (std::int64_t d : t.shape)
                if ((count *= std::uint64_t(d)) > tpumodel::max_elements)
                    throw CompileError(n.describe() + ": output '" + t.name + "' of shape " +
                                       t.shape_string() +
                                       " is absurdly large (more than 2^32 elements)");
        }
}

} // namespace tpu_onnx
