// SPDX-License-Identifier: MIT
// lower.cpp - the checked, inferred ONNX graph as a tpumodel graph: initialisers and Constant
// nodes become constants (their data decoded from raw_data or the typed fields), graph inputs
// and every node's outputs get their dtype and inferred shape (-1 for a dimension still unknown),
// attributes are copied. Refused: other op domains, subgraphs, external data, dtypes the card's
// stack does not handle.
#include "passes.hpp"
#include "tpu_onnx/tensor_proto.hpp"

#include <tpumodel/cpu_kernels.hpp>

#include <cstring>
#include <map>

namespace tpu_onnx {

namespace {

using tpumodel::DType;
using tpumodel::Tensor;

// A value's dtype and shape from ONNX's type information (-1 for an unknown dimension).
Tensor value_of(const onnx::ValueInfoProto &v, const std::string &path) {
    Tensor t;
    t.name = v.name();
    if (!v.type().has_tensor_type())
        throw CompileError(path + ": '" + v.name() +
                           "' is not a tensor (sequences, maps and "
                           "optionals are not supported)");
    t.dtype =
        dtype_from_onnx(v.type().tensor_type().elem_type(), "tensor '" + v.name() + "'", path);
    if (!v.type().tensor_type().has_shape())
        t.shape = {-1};
    for (const auto &d : v.type().tensor_type().shape().dim())
        t.shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
    return t;
}

tpumodel::Attribute attribute_of(const onnx::AttributeProto &a, const tpumodel::Node &n,
                                 const std::string &path) {
    switch (a.type()) {
    case onnx::AttributeProto_AttributeType_INT:
        return {a.name(), std::int64_t(a.i())};
    case onnx::AttributeProto_AttributeType_FLOAT:
        return {a.name(), a.f()};
    case onnx::AttributeProto_AttributeType_STRING:
        return {a.name(), a.s()};
    case onnx::AttributeProto_AttributeType_INTS:
        return {a.name(), std::vector<std::int64_t>(a.ints().begin(), a.ints().end())};
    case onnx::AttributeProto_AttributeType_FLOATS:
        return {a.name(), std::vector<float>(a.floats().begin(), a.floats().end())};
    default:
        throw CompileError(path + ": " + n.describe() + ": attribute '" + a.name() + "' is a " +
                           onnx::AttributeProto_AttributeType_Name(a.type()) +
                           ", which tpu-compile does not take (no subgraphs or tensors)");
    }
}

// ConstantOfShape's one-element `value` tensor as attributes the file can hold: "dtype" (ONNX's
// number) and "value" (a float, or an integer for integer dtypes).
void fill_value(tpumodel::Node &n, const Tensor &value) {
    if (value.element_count() != 1)
        throw CompileError(n.describe() + ": its value must hold one element");
    n.set("dtype", std::int64_t(value.dtype));
    if (value.dtype == DType::Float || value.dtype == DType::Bfloat16)
        n.set("value", float(tpumodel::cpu::real_at(value, 0)));
    else
        n.set("value", tpumodel::cpu::int_at(value, 0));
}

// A Constant node's value as a constant tensor named after its output.
Tensor constant_node(const onnx::NodeProto &node, const tpumodel::Node &n,
                     const std::string &path) {
    const std::string &out = node.output(0);
    for (const onnx::AttributeProto &a : node.attribute()) {
        Tensor t;
        t.name = out;
        t.constant = true;
        if (a.name() == "value")
            return tensor_from_proto(a.t(), out, path);
        if (a.name() == "value_float" || a.name() == "value_floats") {
            std::vector<float> v(a.floats().begin(), a.floats().end());
            if (a.name() == "value_float")
                v = {a.f()};
            else
                t.shape = {std::int64_t(v.size())};
            t.dtype = DType::Float;
            t.data.resize(v.size() * 4);
            std::memcpy(t.data.data(), v.data(), t.data.size());
            return t;
        }
        if (a.name() == "value_int" || a.name() == "value_ints") {
            std::vector<std::int64_t> v(a.ints().begin(), a.ints().end());
            if (a.name() == "value_int")
                v = {a.i()};
            else
                t.shape = {std::int64_t(v.size())};
            t.dtype = DType::Int64;
            t.data.resize(v.size() * 8);
            std::memcpy(t.data.data(), v.data(), t.data.size());
            return t;
        }
    }
    throw CompileError(path + ": " + n.describe() +
                       " has no value tpu-compile reads (value, "
                       "value_float(s), value_int(s))");
}

} // namespace

tpumodel::Model lower(const onnx::ModelProto &model, const std::string &path) {
    const onnx::GraphProto &g = model.graph();
    tpumodel::Model m;
    std::map<std::string, std::uint32_t> ids;
    auto add = [&](Tensor t) {
        const std::string name = t.name;
        return ids[name] = m.add_tensor(std::move(t));
    };

    for (const onnx::TensorProto &t : g.initializer())
        add(tensor_from_proto(t, t.name(), path));
    for (const onnx::ValueInfoProto &v : g.input())
        if (!ids.count(v.name()))
            m.inputs.push_back(add(value_of(v, path)));
    std::map<std::string, const onnx::ValueInfoProto *> infos;
    for (const onnx::ValueInfoProto &v : g.value_info())
        infos[v.name()] = &v;
    for (const onnx::ValueInfoProto &v : g.output())
        infos[v.name()] = &v;

    std::size_t index = 0;
    for (const onnx::NodeProto &node : g.node()) {
        tpumodel::Node n;
        n.op = node.op_type();
        n.name = node.name().empty() ? node.op_type() + "_" + std::to_string(index) : node.name();
        ++index;
        if (!node.domain().empty() && node.domain() != "ai.onnx")
            throw CompileError(path + ": " + n.describe() + " is from op domain '" + node.domain() +
                               "': unsupported (only ONNX's own ops)");
        if (n.op == "Constant") {
            if (node.output_size() != 1)
                throw CompileError(path + ": " + n.describe() + " must have one output");
            add(constant_node(node, n, path));
            continue;
        }
        for (const onnx::AttributeProto &a : node.attribute()) {
            if (n.op == "ConstantOfShape" && a.name() == "value") {
                fill_value(n, tensor_from_proto(a.t(), n.name + ".value", path));
                continue;
            }
            n.attributes.push_back(attribute_of(a, n, path));
        }
        for (const std::string &in : node.input()) {
            if (in.empty()) {
                n.inputs.push_back(tpumodel::no_tensor);
                continue;
            }
            const auto it = ids.find(in);
            if (it == ids.end())
                throw CompileError(path + ": " + n.describe() + " reads '" + in +
                                   "', which no node, initialiser or input provides");
            n.inputs.push_back(it->second);
        }
        for (const std::string &out : node.output()) {
            if (out.empty())
                continue; // an optional output left out
            const auto info = infos.find(out);
            Tensor t;
            if (info != infos.end()) {
                t = value_of(*info->second, path);
            } else {
                t.name = out;
                t.shape = {-1}; // no inferred type: folding may still give it one
            }
            n.outputs.push_back(add(std::move(t)));
        }
        m.nodes.push_back(std::move(n));
    }
    for (const onnx::ValueInfoProto &v : g.output()) {
        const auto it = ids.find(v.name());
        if (it == ids.end())
            throw CompileError(path + ": graph output '" + v.name() + "' is produced by no node");
        m.outputs.push_back(it->second);
    }
    return m;
}

} // namespace tpu_onnx
