// SPDX-License-Identifier: MIT
// passes.hpp - the compiler's steps, in the order compile.cpp runs them. The first three work
// on ONNX's ModelProto through libonnx; the rest on the tpumodel graph (those in graph/).
#pragma once

#include "tpu_onnx/compile.hpp"

#include <onnx/onnx_pb.h>

namespace tpu_onnx {

// load.cpp: the model's bytes (from the file `path`) parsed and checked by onnx::checker; its
// default-domain opset in 7-17.
onnx::ModelProto load_checked(const std::string &bytes, const std::string &path,
                              CompileSummary &summary);
// opset.cpp: the model converted to opset 17 by ONNX's version converter.
void convert_opset(onnx::ModelProto &model, const std::string &path);
// shapes.cpp: the inputs' shapes fixed from `shapes`, then ONNX's shape inference (with data
// propagation, which follows PyTorch's Shape/Gather/Concat chains into Reshape).
void infer_shapes(onnx::ModelProto &model,
                  const std::map<std::string, std::vector<std::int64_t>> &shapes,
                  const std::string &path);
// isolate.cpp: the three steps above in a child process, so that a crash inside libonnx on a
// malformed model is a CompileError; the inferred model and the summary's opset and node count.
onnx::ModelProto load_and_infer(const std::string &bytes, const std::string &path,
                                const CompileOptions &options, CompileSummary &summary);
// lower.cpp: the ONNX graph as a tpumodel graph (Constant nodes become constants); a dimension
// left unknown is -1 until folding.
tpumodel::Model lower(const onnx::ModelProto &model, const std::string &path);
// fold.cpp: nodes whose inputs are all constants (and Shape of a static shape) evaluated with
// the CPU kernels; then every remaining shape must be static and of sane size.
void fold_constants(tpumodel::Model &m, CompileSummary &summary);
// batchnorm.cpp: inference-mode BatchNormalization after a Conv with constant weights folded
// into those weights and the bias.
void fold_batchnorms(tpumodel::Model &m, CompileSummary &summary);
// layout.cpp: images to NHWC, Conv weights to HWIO, Gemm weights to [K, N], the flatten order
// into the following Gemm's weights, Transposes at the edges.
void convert_layouts(tpumodel::Model &m, CompileSummary &summary);
// nodes.cpp, for the passes that write a node as several: a float data tensor of `shape`, a
// one-element float constant, and a node of `op` from `inputs` to `output` (all placed later).
std::uint32_t add_float_tensor(tpumodel::Model &m, const std::string &name,
                               std::vector<std::int64_t> shape);
std::uint32_t add_float_scalar(tpumodel::Model &m, const std::string &name, float value);
tpumodel::Node op_node(const std::string &name, const char *op, std::vector<std::uint32_t> inputs,
                       std::uint32_t output);
// A Transpose node (placed later) from tensor `from` to `to` with permutation `perm`.
tpumodel::Node transpose_node(const std::string &name, std::uint32_t from, std::uint32_t to,
                              std::vector<std::int64_t> perm);
// last_axis.cpp: Softmax and LogSoftmax over another axis than the last between a Transpose
// that moves it last and one that moves it back.
void move_to_last_axis(tpumodel::Model &m, CompileSummary &summary);
// decompose.cpp: Abs and ReduceSumSquare as ops the card has.
void decompose(tpumodel::Model &m);
// batchnorm.cpp: a BatchNormalization not folded as the elementwise ops it is made of.
void split_batchnorms(tpumodel::Model &m);
// batchnorm.cpp: an inference-mode BatchNormalization whose four vectors are constants of the
// data's channel count (the layout pass keeps its 4-D data NHWC).
bool constant_batchnorm(const tpumodel::Model &m, const tpumodel::Node &bn);
// gemm.cpp: a Gemm the card's dense cannot take as Transposes, a MatMul, Muls and an Add.
void split_gemms(tpumodel::Model &m);
// layer_norm_statistics.cpp: a LayerNormalization's Mean and InvStdDev outputs computed by nodes
// of their own, the node left with Y.
void split_layer_norm_statistics(tpumodel::Model &m);
// broadcast.cpp: Neg as Mul by -1; Add/Mul with a constant first operand swapped; one-element
// constants of Add/Sub/Mul as rows of the data's last axis.
void shape_constant_operands(tpumodel::Model &m);
// fuse.cpp: Conv/Gemm + Relu into one node.
void fuse(tpumodel::Model &m, CompileSummary &summary);
// placement.cpp: every node on the card (its libtpurt op) or the CPU (its reason); a node with
// neither is refused.
void place(tpumodel::Model &m);
// prune.cpp: tensors no node or graph output uses dropped, ids renumbered.
void prune(tpumodel::Model &m);
// calibrate.cpp: for --dtype int8, the range of every int8 layer's data over `samples` (whole
// samples of the one graph input, in its ONNX order) as its attribute calibrated_max.
void calibrate(tpumodel::Model &m, const std::vector<float> &samples);

// The op label of the report: "Conv+Relu" for a fused node.
std::string op_label(const tpumodel::Node &n);

} // namespace tpu_onnx
