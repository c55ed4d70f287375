// SPDX-License-Identifier: MIT
// lower.cpp - the checked, inferred ONNX graph as a tpumodel graph: initialisers and Constant
// nodes become constants (their data decoded from raw_data or the typed fields), graph inputs
// and every node's outputs get their dtype and inferred shape (-1 for a dimension still unknown),
// attributes are copied. Refused: other op domains, subgraphs, external data, dtypes the card's
// stack does not handle.
#include "passes.hpp"

#include <cstring>
#include <map>

namespace tpu_onnx {

namespace {

using tpumodel::DType;
using tpumodel::Tensor;

DType dtype_of(std::int32_t elem_type, const std::string &what, const std::string &path) {
    if (elem_type >= 0 && elem_type < 256 && tpumodel::dtype_known(std::uint8_t(elem_type)))
        return DType(elem_type);
    const std::string name = onnx::TensorProto_DataType_IsValid(elem_type)
                                 ? onnx::TensorProto_DataType_Name(elem_type)
                                 : std::to_string(elem_type);
    throw CompileError(path + ": " + what + " is of type " + name +
                       ": tpu-compile takes FLOAT, BFLOAT16, INT8, UINT8, INT32, INT64, BOOL");
}

template <typename Field> void copy_field(Tensor &t, const Field &values) {
    t.data.resize(t.element_count() * tpumodel::dtype_size(t.dtype));
    const std::size_t size = tpumodel::dtype_size(t.dtype);
    for (int i = 0; i < values.size() && std::size_t(i) * size < t.data.size(); ++i) {
        const auto v = values.Get(i);
        std::memcpy(t.data.data() + std::size_t(i) * size, &v, size); // little-endian: low bytes
    }
}

Tensor constant_of(const onnx::TensorProto &p, const std::string &name, const std::string &path) {
    Tensor t;
    t.name = name;
    t.dtype = dtype_of(p.data_type(), "constant '" + name + "'", path);
    t.constant = true;
    for (std::int64_t d : p.dims())
        t.shape.push_back(d);
    if (p.data_location() == onnx::TensorProto_DataLocation_EXTERNAL)
        throw CompileError(path + ": constant '" + name +
                           "' keeps its data in an external file, which tpu-compile does not read");
    std::uint64_t count = 1;
    for (std::int64_t d : t.shape) {
        if (d < 0)
            throw CompileError(path + ": constant '" + name + "' has a negative dimension");
        count *= std::uint64_t(d);
        if (count > tpumodel::max_elements)
            throw CompileError(path + ": constant '" + name + "' is absurdly large");
    }
    const std::uint64_t bytes = count * tpumodel::dtype_size(t.dtype);
    std::uint64_t held = 0;
    if (p.has_raw_data()) {
        held = p.raw_data().size();
        if (held == bytes)
            t.data.assign(p.raw_data().begin(), p.raw_data().end());
    } else if (t.dtype == DType::Float) {
        held = std::uint64_t(p.float_data_size()) * 4;
        copy_field(t, p.float_data());
    } else if (t.dtype == DType::Int64) {
        held = std::uint64_t(p.int64_data_size()) * 8;
        copy_field(t, p.int64_data());
    } else {
        held = std::uint64_t(p.int32_data_size()) * tpumodel::dtype_size(t.dtype);
        copy_field(t, p.int32_data());
    }
    if (held != bytes)
        throw CompileError(path + ": constant '" + name + "' holds " + std::to_string(held) +
                           " bytes of data, its shape needs " + std::to_string(bytes));
    return t;
}

// A value's dtype and shape from ONNX's type information (-1 for an unknown dimension).
Tensor value_of(const onnx::ValueInfoProto &v, const std::string &path) {
    Tensor t;
    t.name = v.name();
    if (!v.type().has_tensor_type())
        throw CompileError(path + ": '" + v.name() +
                           "' is not a tensor (sequences, maps and "
                           "optionals are not supported)");
    t.dtype = dtype_of(v.type().tensor_type().elem_type(), "tensor '" + v.name() + "'", path);
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

// A Constant node's value as a constant tensor named after its output.
Tensor constant_node(const onnx::NodeProto &node, const tpumodel::Node &n,
                     const std::string &path) {
    const std::string &out = node.output(0);
    for (const onnx::AttributeProto &a : node.attribute()) {
        Tensor t;
        t.name = out;
        t.constant = true;
        if (a.name() == "value")
            return constant_of(a.t(), out, path);
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
        add(constant_of(t, t.name(), path));
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
        for (const onnx::AttributeProto &a : node.attribute())
            n.attributes.push_back(attribute_of(a, n, path));
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
