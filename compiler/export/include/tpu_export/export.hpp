// SPDX-License-Identifier: MIT
// export.hpp - trained networks written as ONNX models (tpu-export): the checkpoint's input
// normalisation, then its layers as standard ONNX operators at opset 17, so that any ONNX
// runtime computes the same function as the stack's own inference (compiler/README.md,
// "Export").
#pragma once

#include <tpu_infer/network.hpp>

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

// A checkpoint that cannot be exported (a quantised one), or a file that cannot be written.
class ExportError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// The MLP as input [batch, inputs] -> Sub, Div (the normalisation) -> Gemm (+ Relu) ... ->
// logits [batch, classes].
onnx::ModelProto mlp_to_onnx(const tpu_infer::FloatMlp &net, const ExportOptions &options);
// The CNN as input [batch, C, H, W] (ONNX's NCHW) -> Sub, Div -> per block Conv (3x3, pads 1,
// bias), Relu, MaxPool (2x2, stride 2) -> Flatten -> Gemm (+ Relu) ... -> logits. The first dense
// layer's rows are reordered from the stack's (h, w, c) flatten order to ONNX's (c, h, w).
onnx::ModelProto cnn_to_onnx(const tpu_infer::FloatCnn &net, const ExportOptions &options);

struct ExportSummary {
    std::string model; // the checkpoint's model name
    std::size_t nodes = 0, parameters = 0;
    std::string input_shape, output_shape; // e.g. "batchx1x28x28", "batchx10"
};

// Loads the fp32 checkpoint at `checkpoint` (its checks), builds the model, checks it with
// onnx::checker and shape inference, and writes it to `onnx_path` crash-safely. Throws
// tpu_data::DataError for a bad checkpoint and ExportError for the rest, naming the file.
ExportSummary export_checkpoint(const std::string &checkpoint, const std::string &onnx_path,
                                const ExportOptions &options);

} // namespace tpu_export
