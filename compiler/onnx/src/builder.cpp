// SPDX-License-Identifier: MIT
// builder.cpp - ONNX models built in C++ (builder.hpp).
#include "tpu_onnx/builder.hpp"

#include "tpu_data/file_write.hpp"

#include <stdexcept>

namespace tpu_onnx {

namespace {

void set_type(onnx::ValueInfoProto *v, const std::string &name, const std::vector<Dim> &dims,
              int elem_type) {
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
}

} // namespace

ModelBuilder::ModelBuilder(std::int64_t opset, const std::string &producer,
                           const std::string &graph_name) {
    model_.set_ir_version(8);
    model_.set_producer_name(producer);
    onnx::OperatorSetIdProto *o = model_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    model_.mutable_graph()->set_name(graph_name);
}

ModelBuilder &ModelBuilder::input(const std::string &name, const std::vector<Dim> &dims,
                                  int elem_type) {
    set_type(model_.mutable_graph()->add_input(), name, dims, elem_type);
    return *this;
}

ModelBuilder &ModelBuilder::output(const std::string &name, int rank, int elem_type) {
    std::vector<Dim> dims;
    for (int i = 0; i < rank; ++i)
        dims.emplace_back(name + "_" + std::to_string(i));
    return output(name, dims, elem_type);
}

ModelBuilder &ModelBuilder::output(const std::string &name, const std::vector<Dim> &dims,
                                   int elem_type) {
    set_type(model_.mutable_graph()->add_output(), name, dims, elem_type);
    return *this;
}

ModelBuilder &ModelBuilder::floats(const std::string &name, const std::vector<std::int64_t> &dims,
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

ModelBuilder &ModelBuilder::ints(const std::string &name, const std::vector<std::int64_t> &dims,
                                 const std::vector<std::int64_t> &values, int elem_type) {
    onnx::TensorProto *t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(elem_type);
    for (std::int64_t d : dims)
        t->add_dims(d);
    for (std::int64_t v : values)
        if (elem_type == onnx::TensorProto_DataType_INT64)
            t->add_int64_data(v);
        else
            t->add_int32_data(std::int32_t(v)); // ONNX keeps int32, int8 and uint8 there
    return *this;
}

ModelBuilder &ModelBuilder::node(const std::string &op, const std::vector<std::string> &inputs,
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

void ModelBuilder::write(const std::string &path) const {
    std::string bytes;
    if (!model_.SerializeToString(&bytes))
        throw std::runtime_error("cannot serialise the ONNX model for " + path);
    tpu_data::write_file_atomically(path, bytes.data(), bytes.size());
}

} // namespace tpu_onnx
