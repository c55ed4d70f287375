// SPDX-License-Identifier: MIT
// load.cpp - an ONNX file parsed, its opset checked against the 7-17 the converter handles,
// and the model checked by onnx::checker (types, attributes, topological order, names).
#include "passes.hpp"

#include <onnx/checker.h>

#include <fstream>

namespace tpu_onnx {

onnx::ModelProto load_checked(const std::string &path, CompileSummary &summary) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw CompileError(path + ": cannot open the file");
    onnx::ModelProto model;
    if (!model.ParseFromIstream(&in))
        throw CompileError(path + ": not an ONNX model (the protobuf does not parse: a truncated "
                                  "or foreign file)");
    if (!model.has_graph())
        throw CompileError(path + ": not an ONNX model (it has no graph)");

    std::int64_t opset = -1;
    for (const onnx::OperatorSetIdProto &o : model.opset_import())
        if (o.domain().empty() || o.domain() == "ai.onnx")
            opset = o.version();
    if (opset < 0)
        throw CompileError(path + ": the model imports no opset of the default ONNX domain");
    if (opset < min_opset || opset > target_opset)
        throw CompileError(path + ": opset " + std::to_string(opset) + " is outside " +
                           std::to_string(min_opset) + "-" + std::to_string(target_opset) +
                           " (the versions ONNX 1.12's converter takes to opset 17)");
    summary.source_opset = opset;
    summary.onnx_nodes = std::size_t(model.graph().node_size());

    try {
        onnx::checker::check_model(model);
    } catch (const std::exception &e) {
        throw CompileError(path + ": the ONNX checker refuses the model: " + e.what());
    }
    return model;
}

} // namespace tpu_onnx
