// SPDX-License-Identifier: MIT
// executor.cpp - the graph's nodes in order through their reference kernels; each result is
// checked against the shape and dtype the model declares and takes its declared layout.
#include "tpumodel/cpu_executor.hpp"

#include "tpumodel/cpu_kernels.hpp"

#include <optional>

namespace tpumodel::cpu {

std::vector<Tensor> run_node(const Model &m, const Node &n, const std::vector<const Tensor *> &in) {
    const Kernel kernel = find_kernel(n.op);
    if (!kernel)
        throw KernelError(n, "no CPU kernel for " + n.op);
    if (n.outputs.empty())
        throw KernelError(n, "has no outputs");
    std::vector<Tensor> results(n.outputs.size());
    std::vector<Tensor *> out;
    for (Tensor &t : results)
        out.push_back(&t);
    kernel(n, in, out);
    for (std::size_t i = 0; i < results.size(); ++i) {
        const Tensor &want = m.tensors[n.outputs[i]];
        if (results[i].shape != want.shape || results[i].dtype != want.dtype)
            throw KernelError(n, "gave '" + want.name + "' " + dtype_name(results[i].dtype) + " " +
                                     results[i].shape_string() + ", the model says " +
                                     dtype_name(want.dtype) + " " + want.shape_string());
        results[i].name = want.name;
        results[i].layout = want.layout;
    }
    return results;
}

std::optional<ZeroInputs> zero_inputs(const Model &m, const Node &n) {
    std::uint64_t elements = 0;
    for (std::uint32_t id : n.inputs) {
        if (id == no_tensor)
            continue;
        for (std::int64_t d : m.tensors[id].shape)
            if (d < 0)
                return std::nullopt;
        elements += m.tensors[id].element_count();
    }
    if (elements > (std::uint64_t(1) << 24))
        return std::nullopt;
    ZeroInputs z;
    z.zeros.reserve(n.inputs.size());
    for (std::uint32_t id : n.inputs) {
        if (id == no_tensor) {
            z.in.push_back(nullptr);
            continue;
        }
        const Tensor &t = m.tensors[id];
        if (t.constant) {
            z.in.push_back(&t);
            continue;
        }
        if (t.dtype == DType::Int64 || t.dtype == DType::Int32)
            return std::nullopt;
        z.zeros.push_back(t);
        z.zeros.back().data.assign(t.element_count() * dtype_size(t.dtype), 0);
        z.in.push_back(&z.zeros.back());
    }
    return z;
}

void check_node_runs(const Model &m, const Node &n) {
    if (const std::optional<ZeroInputs> z = zero_inputs(m, n))
        run_node(m, n, z->in);
}

std::vector<std::optional<Tensor>> run_values(const Model &m, const std::vector<Tensor> &inputs,
                                              const NodeRunner &run) {
    if (inputs.size() != m.inputs.size())
        throw std::invalid_argument("the model takes " + std::to_string(m.inputs.size()) +
                                    " inputs, " + std::to_string(inputs.size()) + " given");
    std::vector<std::optional<Tensor>> values(m.tensors.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const Tensor &want = m.tensors[m.inputs[i]];
        if (inputs[i].dtype != want.dtype || inputs[i].shape != want.shape ||
            inputs[i].data.size() != want.element_count() * dtype_size(want.dtype))
            throw std::invalid_argument("input '" + want.name + "' must be " +
                                        dtype_name(want.dtype) + " " + want.shape_string());
        values[m.inputs[i]] = inputs[i];
    }
    auto value = [&](std::uint32_t id) -> const Tensor * {
        if (id == no_tensor)
            return nullptr;
        return m.tensors[id].constant ? &m.tensors[id] : &*values[id];
    };
    for (const Node &n : m.nodes) {
        std::vector<const Tensor *> in;
        for (std::uint32_t id : n.inputs)
            in.push_back(value(id));
        std::vector<Tensor> results = run ? run(n, in) : run_node(m, n, in);
        for (std::size_t i = 0; i < results.size(); ++i)
            values[n.outputs[i]] = std::move(results[i]);
    }
    return values;
}

std::vector<Tensor> run_model(const Model &m, const std::vector<Tensor> &inputs,
                              const NodeRunner &run) {
    std::vector<std::optional<Tensor>> values = run_values(m, inputs, run);
    std::vector<Tensor> outputs;
    for (std::uint32_t id : m.outputs)
        outputs.push_back(m.tensors[id].constant ? m.tensors[id] : *values[id]);
    return outputs;
}

} // namespace tpumodel::cpu
