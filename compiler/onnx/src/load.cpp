// SPDX-License-Identifier: MIT
// load.cpp - an ONNX model's bytes parsed, its opset checked against the 7-17 the converter
// handles (an older one raised to 7 when none of the model's ops changed since), and the model
// checked by onnx::checker (types, attributes, topological order, names).
#include "passes.hpp"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>

#include <set>

namespace tpu_onnx {

namespace {

// Every node of the default domain means the same at `opset` as at min_opset: its op's schema
// there is the one in force at min_opset (GlobalAveragePool, Relu, ... have one version since
// opset 1), so the model can be read as an opset-7 model, which the converter takes.
bool unchanged_since(const onnx::GraphProto &graph, std::int64_t opset) {
    for (const onnx::NodeProto &n : graph.node()) {
        if (!n.domain().empty() && n.domain() != "ai.onnx")
            continue;
        const onnx::OpSchema *then = onnx::OpSchemaRegistry::Schema(n.op_type(), int(opset));
        const onnx::OpSchema *later = onnx::OpSchemaRegistry::Schema(n.op_type(), int(min_opset));
        if (!then || !later || then->since_version() != later->since_version())
            return false;
    }
    return true;
}

std::int64_t raise_opset(onnx::ModelProto &model, std::int64_t opset) {
    for (onnx::OperatorSetIdProto &o : *model.mutable_opset_import())
        if (o.domain().empty() || o.domain() == "ai.onnx")
            o.set_version(opset);
    return opset;
}

} // namespace

onnx::ModelProto load_checked(const std::string &bytes, const std::string &path,
                              CompileSummary &summary) {
    onnx::ModelProto model;
    if (!model.ParseFromString(bytes))
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
    summary.source_opset = opset;
    if (opset >= 1 && opset < min_opset && unchanged_since(model.graph(), opset))
        opset = raise_opset(model, min_opset);
    if (opset < min_opset || opset > target_opset)
        throw CompileError(path + ": opset " + std::to_string(opset) + " is outside " +
                           std::to_string(min_opset) + "-" + std::to_string(target_opset) +
                           " (the versions ONNX 1.12's converter takes to opset 17)");
    summary.onnx_nodes = std::size_t(model.graph().node_size());

    try {
        onnx::checker::check_model(model);
    } catch (const std::exception &e) {
        throw CompileError(path + ": the ONNX checker refuses the model: " + e.what());
    }
    // ONNX 1.12's checker lets a graph output that nothing defines through, and its version
    // converter then dereferences the missing producer.
    std::set<std::string> defined;
    for (const onnx::ValueInfoProto &v : model.graph().input())
        defined.insert(v.name());
    for (const onnx::TensorProto &t : model.graph().initializer())
        defined.insert(t.name());
    for (const onnx::NodeProto &n : model.graph().node())
        defined.insert(n.output().begin(), n.output().end());
    for (const onnx::ValueInfoProto &v : model.graph().output())
        if (!defined.count(v.name()))
            throw CompileError(path + ": graph output '" + v.name() +
                               "' is not an input, an initialiser or any node's output");
    return model;
}

} // namespace tpu_onnx
