// SPDX-License-Identifier: MIT
// onnx_builder.cpp - the test models' builder (onnx_builder.hpp).
#include "onnx_builder.hpp"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <unistd.h>

namespace compiler_test {

OnnxBuilder::OnnxBuilder(std::int64_t opset) {
    model_.set_ir_version(8);
    model_.set_producer_name("compiler_tests");
    onnx::OperatorSetIdProto *o = model_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    model_.mutable_graph()->set_name("test");
}

OnnxBuilder &OnnxBuilder::input(const std::string &name, const std::vector<Dim> &dims,
                                int elem_type) {
    onnx::ValueInfoProto *v = model_.mutable_graph()->add_input();
    v->set_name(name);
    onnx::TypeProto_Tensor *t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem_type);
    onnx::TensorShapeProto *shape = t->mutable_shape();
    for (const Dim &d : dims) {
        onnx::TensorShapeProto_Dimension *dim = shape->add_dim();
        if (const auto *size = std::get_if<std::int64_t>(&d))
            dim->set_dim_value(*size);
        else
            dim->set_dim_param(std::get<std::string>(d));
    }
    return *this;
}

OnnxBuilder &OnnxBuilder::output(const std::string &name, int rank, int elem_type) {
    onnx::ValueInfoProto *v = model_.mutable_graph()->add_output();
    v->set_name(name);
    onnx::TypeProto_Tensor *t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem_type);
    for (int i = 0; i < rank; ++i)
        t->mutable_shape()->add_dim()->set_dim_param(name + "_" + std::to_string(i));
    return *this;
}

OnnxBuilder &OnnxBuilder::floats(const std::string &name, const std::vector<std::int64_t> &dims,
                                 const std::vector<float> &values) {
    onnx::TensorProto *t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto_DataType_FLOAT);
    for (std::int64_t d : dims)
        t->add_dims(d);
    for (float v : values)
        t->add_float_data(v);
    return *this;
}

OnnxBuilder &OnnxBuilder::ints(const std::string &name, const std::vector<std::int64_t> &dims,
                               const std::vector<std::int64_t> &values) {
    onnx::TensorProto *t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto_DataType_INT64);
    for (std::int64_t d : dims)
        t->add_dims(d);
    for (std::int64_t v : values)
        t->add_int64_data(v);
    return *this;
}

OnnxBuilder &OnnxBuilder::node(const std::string &op, const std::vector<std::string> &inputs,
                               const std::vector<std::string> &outputs, const std::string &name,
                               const std::vector<std::pair<std::string, AttrValue>> &attrs) {
    onnx::NodeProto *n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const std::string &i : inputs)
        n->add_input(i);
    for (const std::string &o : outputs)
        n->add_output(o);
    for (const auto &[key, value] : attrs) {
        onnx::AttributeProto *a = n->add_attribute();
        a->set_name(key);
        if (const auto *i = std::get_if<std::int64_t>(&value)) {
            a->set_type(onnx::AttributeProto_AttributeType_INT);
            a->set_i(*i);
        } else if (const auto *f = std::get_if<float>(&value)) {
            a->set_type(onnx::AttributeProto_AttributeType_FLOAT);
            a->set_f(*f);
        } else if (const auto *s = std::get_if<std::string>(&value)) {
            a->set_type(onnx::AttributeProto_AttributeType_STRING);
            a->set_s(*s);
        } else if (const auto *is = std::get_if<std::vector<std::int64_t>>(&value)) {
            a->set_type(onnx::AttributeProto_AttributeType_INTS);
            for (std::int64_t v : *is)
                a->add_ints(v);
        } else {
            a->set_type(onnx::AttributeProto_AttributeType_FLOATS);
            for (float v : std::get<std::vector<float>>(value))
                a->add_floats(v);
        }
    }
    return *this;
}

namespace {

// One directory per process (test runs of several checkouts may share the machine), removed
// when the process ends.
struct ScratchDir {
    ScratchDir()
        : path(std::filesystem::temp_directory_path() /
               ("compiler_tests." + std::to_string(getpid()))) {
        std::filesystem::create_directories(path);
    }
    ~ScratchDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
    std::filesystem::path path;
};

} // namespace

std::string scratch_path(const std::string &file) {
    static const ScratchDir dir;
    return (dir.path / file).string();
}

std::string OnnxBuilder::save(const std::string &file) const {
    const std::string path = scratch_path(file);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!model_.SerializeToOstream(&out))
        throw std::runtime_error("cannot write " + path);
    return path;
}

std::vector<float> pattern(std::size_t n, std::uint32_t seed) {
    std::vector<float> v(n);
    std::uint32_t s = seed * 2654435761u + 1;
    for (float &x : v) {
        s = s * 1664525u + 1013904223u;
        x = float(s >> 8) / float(1u << 23) - 1.0f;
    }
    return v;
}

} // namespace compiler_test
