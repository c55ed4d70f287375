// SPDX-License-Identifier: MIT
// export.hpp - trained networks written as ONNX models (tpu-export): the checkpoint's input
// normalisation, then its layers as standard ONNX operators at opset 17, so that any ONNX
// runtime computes the same function as the stack's own inference (compiler/README.md,
// "Export").
#pragma once

#include <tpu_infer/network.hpp>
#include <tpu_nn/graph.hpp>
#include <tpu_nn/params.hpp>

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace tpu_export {

constexpr std::int64_t export_opset = 17;

struct ExportOptions {
    // The batch dimension: 0 leaves it symbolic ("batch"), any other value fixes it.
    std::int64_t batch = 0;
};

// A checkpoint that cannot be exported (a quantised one, a model name that is not a spec), or a
// file that cannot be written.
class ExportError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// Any model graph (a checkpoint's spec, tpu_nn::build_graph: the MLP and the CNN too) with its
// parameter values (Graph::params() order) as input [batch, features] or, for an image, ONNX's
// NCHW [batch, C, H, W] -> Sub, Div (the normalisation) -> the graph's nodes -> logits
// [batch, classes]: dense as Gemm, conv2d as Conv (kernel, strides, pads, group), max and
// average pooling as MaxPool and AveragePool (count_include_pad 1), flatten as Flatten, relu,
// sigmoid and tanh as themselves, gelu as the primitive ops of its tanh form, layer norm as
// LayerNormalization over the last axis (an image's channels), add as Add
// (compiler/README.md, "Export").
onnx::ModelProto graph_to_onnx(const tpu_nn::Graph &g, const tpu_nn::ParamValues &values,
                               const tpu_infer::InputTransform &input,
                               const ExportOptions &options);
// The fp32 checkpoint `c` (read from `path`) as ONNX: the graph of its model name, its tensors
// (tpu_nn::load_params) and its input normalisation, checked with onnx::checker and strict
// shape inference. Throws tpu_data::DataError for a tensor that is missing or misshapen and
// ExportError for the rest (a quantised checkpoint, a model name that is not a spec), naming
// the file.
onnx::ModelProto checkpoint_to_onnx(const tpu_model::Checkpoint &c, const std::string &path,
                                    const ExportOptions &options);

struct ExportSummary {
    std::string model; // the checkpoint's model name
    std::size_t nodes = 0, parameters = 0;
    std::string input_shape, output_shape; // e.g. "batchx1x28x28", "batchx10"
};

// Loads the fp32 checkpoint at `checkpoint` (its checks), exports it (checkpoint_to_onnx) and
// writes it to `onnx_path` crash-safely. Throws tpu_data::DataError for a bad checkpoint and
// ExportError for the rest, naming the file.
ExportSummary export_checkpoint(const std::string &checkpoint, const std::string &onnx_path,
                                const ExportOptions &options);

} // namespace tpu_export
