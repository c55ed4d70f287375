// SPDX-License-Identifier: MIT
// model.cpp - the in-memory model's helpers: dtype and enum names, attribute lookups, tensors.
#include "tpumodel/model.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace tpumodel {

bool dtype_known(std::uint8_t code) {
    switch (DType(code)) {
    case DType::Float:
    case DType::Uint8:
    case DType::Int8:
    case DType::Int32:
    case DType::Int64:
    case DType::Bool:
    case DType::Bfloat16:
        return true;
    }
    return false;
}

std::size_t dtype_size(DType t) {
    switch (t) {
    case DType::Uint8:
    case DType::Int8:
    case DType::Bool:
        return 1;
    case DType::Bfloat16:
        return 2;
    case DType::Float:
    case DType::Int32:
        return 4;
    case DType::Int64:
        return 8;
    }
    throw std::invalid_argument("dtype_size: unknown dtype " + std::to_string(int(t)));
}

const char *dtype_name(DType t) {
    switch (t) {
    case DType::Float:
        return "float32";
    case DType::Uint8:
        return "uint8";
    case DType::Int8:
        return "int8";
    case DType::Int32:
        return "int32";
    case DType::Int64:
        return "int64";
    case DType::Bool:
        return "bool";
    case DType::Bfloat16:
        return "bfloat16";
    }
    return "unknown";
}

const char *layout_name(Layout l) {
    switch (l) {
    case Layout::Plain:
        return "plain";
    case Layout::Nhwc:
        return "NHWC";
    case Layout::Hwio:
        return "HWIO";
    }
    return "unknown";
}

const char *placement_name(Placement p) {
    return p == Placement::Card ? "card" : "cpu";
}

const char *precision_name(Precision p) {
    switch (p) {
    case Precision::Fp32:
        return "fp32";
    case Precision::Bf16:
        return "bf16";
    case Precision::Int8:
        return "int8";
    }
    return "unknown";
}

bool int8_layer_form(const Model &m, const Node &n) {
    return n.placement == Placement::Card &&
           (n.card_op == "dense" || n.card_op == "conv2d_layer") && n.inputs.size() >= 2 &&
           m.tensors[n.inputs[0]].dtype == DType::Float && !m.tensors[n.inputs[0]].constant &&
           m.tensors[n.inputs[1]].constant;
}

std::vector<float> Tensor::floats() const {
    std::vector<float> v(std::min<std::uint64_t>(element_count(), data.size() / sizeof(float)));
    std::memcpy(v.data(), data.data(), v.size() * sizeof(float));
    return v;
}

std::uint64_t Tensor::element_count() const {
    std::uint64_t n = 1;
    for (std::int64_t d : shape)
        n *= std::uint64_t(d);
    return n;
}

std::string Tensor::shape_string() const {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

const Attribute *Node::find(const std::string &attr) const {
    for (const Attribute &a : attributes)
        if (a.name == attr)
            return &a;
    return nullptr;
}

std::int64_t Node::get_int(const std::string &attr, std::int64_t fallback) const {
    const Attribute *a = find(attr);
    return a && std::holds_alternative<std::int64_t>(a->value) ? std::get<std::int64_t>(a->value)
                                                               : fallback;
}

float Node::get_float(const std::string &attr, float fallback) const {
    const Attribute *a = find(attr);
    return a && std::holds_alternative<float>(a->value) ? std::get<float>(a->value) : fallback;
}

std::string Node::get_string(const std::string &attr, const std::string &fallback) const {
    const Attribute *a = find(attr);
    return a && std::holds_alternative<std::string>(a->value) ? std::get<std::string>(a->value)
                                                              : fallback;
}

std::vector<std::int64_t> Node::get_ints(const std::string &attr,
                                         const std::vector<std::int64_t> &fallback) const {
    const Attribute *a = find(attr);
    return a && std::holds_alternative<std::vector<std::int64_t>>(a->value)
               ? std::get<std::vector<std::int64_t>>(a->value)
               : fallback;
}

void Node::set(const std::string &attr, AttributeValue value) {
    for (Attribute &a : attributes)
        if (a.name == attr) {
            a.value = std::move(value);
            return;
        }
    attributes.push_back({attr, std::move(value)});
}

std::string Node::describe() const {
    return "node '" + name + "' (" + op + ")";
}

std::uint32_t Model::add_tensor(Tensor t) {
    tensors.push_back(std::move(t));
    return std::uint32_t(tensors.size() - 1);
}

std::uint32_t Model::find_tensor(const std::string &name) const {
    for (std::size_t i = 0; i < tensors.size(); ++i)
        if (tensors[i].name == name)
            return std::uint32_t(i);
    return no_tensor;
}

} // namespace tpumodel
