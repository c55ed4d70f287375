// SPDX-License-Identifier: MIT
// shapes.cpp - the graph inputs' shapes fixed (from --input, or the model's own when static),
// then ONNX's shape inference in strict mode with data propagation, so that every tensor gets
// its shape, including those PyTorch computes with Shape/Gather/Unsqueeze/Concat into Reshape.
#include "passes.hpp"

#include <onnx/shape_inference/implementation.h>

#include <set>

namespace tpu_onnx {

namespace {

std::string dims_text(const onnx::TensorShapeProto &shape) {
    std::string s = "[";
    for (int i = 0; i < shape.dim_size(); ++i) {
        const onnx::TensorShapeProto_Dimension &d = shape.dim(i);
        s += (i ? ", " : "") + (d.has_dim_value()   ? std::to_string(d.dim_value())
                                : d.has_dim_param() ? d.dim_param()
                                                    : std::string("?"));
    }
    return s + "]";
}

std::string dims_text(const std::vector<std::int64_t> &dims) {
    std::string s;
    for (std::size_t i = 0; i < dims.size(); ++i)
        s += (i ? "x" : "") + std::to_string(dims[i]);
    return s;
}

// `dims` of a graph input: at least 1 each when given by --input; the model's own fixed
// dimensions may be 0 (ONNX's empty tensors: a node test reshapes one).
void check_size(const std::string &path, const std::string &input,
                const std::vector<std::int64_t> &dims, bool fixed_by_model = false) {
    std::uint64_t count = 1;
    for (std::int64_t d : dims) {
        if (d < (fixed_by_model ? 0 : 1))
            throw CompileError(path + ": input '" + input + "' would have a dimension of " +
                               std::to_string(d) + " (each must be at least 1)");
        count *= std::uint64_t(d);
        if (count > tpumodel::max_elements)
            throw CompileError(path + ": input '" + input + "' of shape " + dims_text(dims) +
                               " is absurdly large (more than 2^32 elements)");
    }
}

} // namespace

void infer_shapes(onnx::ModelProto &model,
                  const std::map<std::string, std::vector<std::int64_t>> &shapes,
                  const std::string &path) {
    onnx::GraphProto &graph = *model.mutable_graph();
    std::set<std::string> initialisers;
    for (const onnx::TensorProto &t : graph.initializer())
        initialisers.insert(t.name());

    std::set<std::string> inputs;
    std::string listed;
    for (const onnx::ValueInfoProto &v : graph.input())
        if (!initialisers.count(v.name())) {
            inputs.insert(v.name());
            listed += (listed.empty() ? "" : ", ") + v.name();
        }
    for (const auto &[name, dims] : shapes)
        if (!inputs.count(name))
            throw CompileError(path + ": --input " + name + ": the model has no input '" + name +
                               "' (its inputs: " + listed + ")");

    for (onnx::ValueInfoProto &v : *graph.mutable_input()) {
        if (!inputs.count(v.name()))
            continue;
        if (!v.type().has_tensor_type())
            throw CompileError(path + ": input '" + v.name() + "' is not a tensor");
        onnx::TensorShapeProto &shape = *v.mutable_type()->mutable_tensor_type()->mutable_shape();
        const auto given = shapes.find(v.name());
        if (given == shapes.end()) {
            std::vector<std::int64_t> dims;
            for (const auto &d : shape.dim())
                if (d.has_dim_value() && d.dim_value() >= 0)
                    dims.push_back(d.dim_value());
            if (!v.type().tensor_type().has_shape() || int(dims.size()) != shape.dim_size())
                throw CompileError(path + ": input '" + v.name() + "' has a dynamic shape " +
                                   dims_text(shape) + ": give its size with --input " + v.name() +
                                   ":SHAPE (e.g. 1x784)");
            check_size(path, v.name(), dims, true);
            continue;
        }
        const std::vector<std::int64_t> &dims = given->second;
        check_size(path, v.name(), dims);
        if (v.type().tensor_type().has_shape() && shape.dim_size() != int(dims.size()))
            throw CompileError(path + ": --input " + v.name() + ":" + dims_text(dims) +
                               " has rank " + std::to_string(dims.size()) +
                               ", the model's input is " + dims_text(shape));
        for (int i = 0; i < shape.dim_size(); ++i)
            if (shape.dim(i).has_dim_value() && shape.dim(i).dim_value() != dims[std::size_t(i)])
                throw CompileError(path + ": --input " + v.name() + ":" + dims_text(dims) +
                                   " disagrees with the model's fixed shape " + dims_text(shape));
        shape.clear_dim();
        for (std::int64_t d : dims)
            shape.add_dim()->set_dim_value(d);
    }

    graph.clear_value_info();
    try {
        onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(),
                                           onnx::ShapeInferenceOptions(true, 1, true));
    } catch (const std::exception &e) {
        throw CompileError(path + ": shape inference failed: " + e.what());
    }
}

} // namespace tpu_onnx
