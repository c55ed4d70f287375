// SPDX-License-Identifier: MIT
// compile_checkpoint.hpp - a checkpoint compiled for the card in the process: exported to ONNX
// in memory (export.hpp) and compiled by tpu_onnx::compile_bytes, as tpu-export followed by
// tpu-compile would. tpu-serve, tpu-eval and tpu-quantise take a model spec checkpoint this way
// (compiler/README.md, "Export"; workloads/README.md, "Model specs"); the checkpoints
// tpu_infer reads (tpu_infer::reads_checkpoint: the MLP, CNNs of convolutions, max pooling and
// ReLU) keep its inference.
#pragma once

#include <tpu_model/checkpoint.hpp>
#include <tpumodel/model.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace tpu_export {

struct CheckpointCompileOptions {
    tpumodel::Precision precision = tpumodel::Precision::Bf16;
    std::size_t batch = 1; // samples per run of the compiled model
    // Int8 only: whole raw samples in the stack's layout (images NHWC, as tpu_data's), e.g. the
    // first training images; they are put in ONNX's layout for the compiler's calibration.
    std::vector<float> calibration;
};

// The fp32 checkpoint `c` (read from `path`, named in errors) compiled: its graph input is
// "input", [batch, features] or ONNX's NCHW [batch, C, H, W] of raw samples (the graph
// standardises them), its output "logits" [batch, classes]. Throws what checkpoint_to_onnx and
// tpu_onnx::compile_bytes throw. In the guest's build (no ONNX there) it throws
// std::runtime_error saying to compile the checkpoint on the host (tpu-export, tpu-compile).
tpumodel::Model compile_checkpoint(const tpu_model::Checkpoint &c, const std::string &path,
                                   const CheckpointCompileOptions &options);

// Samples in the stack's layout (NHWC images of `c`'s model input) in ONNX's (NCHW); vectors as
// they are. The compiled model's runs take them so.
std::vector<float> to_onnx_layout(const tpu_model::Checkpoint &c, const float *samples,
                                  std::size_t count);

} // namespace tpu_export
