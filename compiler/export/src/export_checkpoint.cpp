// SPDX-License-Identifier: MIT
// export_checkpoint.cpp - a checkpoint file exported as a checked ONNX file (export.hpp).
#include "tpu_export/export.hpp"

#include "tpu_data/file_write.hpp"

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

} // namespace

ExportSummary export_checkpoint(const std::string &checkpoint, const std::string &onnx_path,
                                const ExportOptions &options) {
    const tpu_infer::Network net = tpu_infer::load_network(checkpoint);
    onnx::ModelProto model;
    if (const auto *mlp = std::get_if<tpu_infer::FloatMlp>(&net))
        model = mlp_to_onnx(*mlp, options);
    else if (const auto *cnn = std::get_if<tpu_infer::FloatCnn>(&net))
        model = cnn_to_onnx(*cnn, options);
    else
        throw ExportError(checkpoint +
                          ": is a quantised checkpoint; export the fp32 checkpoint it was made "
                          "from and compile it with tpu-compile --dtype int8");
    check(model, onnx_path);

    ExportSummary s;
    s.model = tpu_infer::network_name(net);
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
