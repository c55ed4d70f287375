// SPDX-License-Identifier: MIT
// opset.cpp - the model taken to opset 17 by ONNX's version converter, so that every later step
// sees one version of each op (Squeeze's axes as an input, LayerNormalization, ...).
#include "passes.hpp"

#include <onnx/version_converter/convert.h>

namespace tpu_onnx {

void convert_opset(onnx::ModelProto &model, const std::string &path) {
    std::int64_t opset = 0;
    for (const onnx::OperatorSetIdProto &o : model.opset_import())
        if (o.domain().empty() || o.domain() == "ai.onnx")
            opset = o.version();
    if (opset == target_opset)
        return;
    try {
        model = onnx::version_conversion::ConvertVersion(model, int(target_opset));
    } catch (const std::exception &e) {
        throw CompileError(path + ": converting opset " + std::to_string(opset) +
                           " to 17 failed: " + e.what());
    }
}

} // namespace tpu_onnx
