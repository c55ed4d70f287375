// SPDX-License-Identifier: MIT
// export_checkpoint.cpp - a checkpoint exported as a checked ONNX model, in memory or into a
// file (export.hpp).
#include "tpu_export/export.hpp"

#include "tpu_data/file_write.hpp"

#include <tpu_nn/quantise.hpp>
#include <tpu_nn/spec.hpp>

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

namespace tpu_export {

namespace {

std::string dims_text(const onnx::ValueInfoProto &v) {
    std::string s;
    for (const auto &d : v.type().tensor_type().shape().dim())
        s += (s.empty() ? "" : "x") +
             (d.has_dim_value() ? std::to_string(d.dim_value()) : d.dim_param());
    return s;
}

// onnx::checker on the whole model, then strict shape inference: the exported graph must be
// one every ONNX runtime takes without question.
void check(onnx::ModelProto &model, const std::string &path) {
    try {
        onnx::checker::check_model(model);
        onnx::ShapeInferenceOptions strict{true, 1, true};
        onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), strict);
    } catch (const std::exception &e) {
        throw ExportError(path + ": the exported model fails ONNX's checks: " + e.what());
    }
}

tpu_nn::Graph spec_graph(const tpu_model::Checkpoint &c, const std::string &path) {
    try {
        return tpu_nn::graph_from_spec(c.model);
    } catch (const std::invalid_argument &e) {
        throw ExportError(path + ": its model is not a model spec: " + e.what());
    }
}

} // namespace

onnx::ModelProto checkpoint_to_onnx(const tpu_model::Checkpoint &c, const std::string &path,
                                    const ExportOptions &options) {
    if (c.notes.count(tpu_nn::quantisation_note))
        throw ExportError(path +
                          ": is a quantised checkpoint; export the fp32 checkpoint it was made "
                          "from and compile it with tpu-compile --dtype int8");
    const tpu_nn::Graph g = spec_graph(c, path);
    const tpu_nn::ParamValues values = tpu_nn::load_params(g, c);
    onnx::ModelProto model = graph_to_onnx(g, values, tpu_infer::input_transform(c, path), options);
    check(model, path);
    return model;
}

ExportSummary export_checkpoint(const std::string &checkpoint, const std::string &onnx_path,
                                const ExportOptions &options) {
    const tpu_model::Checkpoint c = tpu_model::load_checkpoint(checkpoint);
    const onnx::ModelProto model = checkpoint_to_onnx(c, checkpoint, options);
    ExportSummary s;
    s.model = c.model;
    s.nodes = std::size_t(model.graph().node_size());
    for (const onnx::TensorProto &t : model.graph().initializer())
        s.parameters += std::size_t(t.float_data_size());
    s.input_shape = dims_text(model.graph().input(0));
    s.output_shape = dims_text(model.graph().output(0));

    std::string bytes;
    if (!model.SerializeToString(&bytes))
        throw ExportError(onnx_path + ": cannot serialise the ONNX model");
    tpu_data::write_file_atomically(onnx_path, bytes.data(), bytes.size());
    return s;
}

} // namespace tpu_export
