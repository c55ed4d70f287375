// SPDX-License-Identifier: MIT
// compile_checkpoint.cpp - a checkpoint exported in memory and compiled (compile_checkpoint.hpp).
#include "tpu_export/compile_checkpoint.hpp"

#include "tpu_export/export.hpp"

#include <tpu_nn/spec.hpp>
#include <tpu_onnx/compile.hpp>

namespace tpu_export {

tpumodel::Model compile_checkpoint(const tpu_model::Checkpoint &c, const std::string &path,
                                   const CheckpointCompileOptions &options) {
    const onnx::ModelProto model =
        checkpoint_to_onnx(c, path, {.batch = std::int64_t(options.batch)});
    std::string bytes;
    if (!model.SerializeToString(&bytes))
        throw ExportError(path + ": cannot serialise the ONNX model");
    tpu_onnx::CompileOptions compile;
    compile.precision = options.precision;
    if (!options.calibration.empty()) {
        const std::size_t size = tpu_nn::elements(tpu_nn::parse_spec(c.model).input);
        if (options.calibration.size() % size != 0)
            throw ExportError(path + ": " + std::to_string(options.calibration.size()) +
                              " calibration values are not whole samples of " +
                              std::to_string(size));
        compile.calibration =
            to_onnx_layout(c, options.calibration.data(), options.calibration.size() / size);
    }
    return tpu_onnx::compile_bytes(bytes, path, compile).model;
}

} // namespace tpu_export
