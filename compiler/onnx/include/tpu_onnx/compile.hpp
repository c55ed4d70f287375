// SPDX-License-Identifier: MIT
// compile.hpp - an ONNX model compiled for the card: checked, converted to opset 17, its shapes
// inferred at the given input sizes, constants folded, images moved to the card's NHWC layout,
// Conv/Gemm + Relu fused, and every node placed on the card or the CPU (compiler/README.md).
#pragma once

#include <tpumodel/model.hpp>

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace tpu_onnx {

constexpr std::int64_t target_opset = 17;
constexpr std::int64_t min_opset = 7;

struct CompileOptions {
    // Shapes of graph inputs, by name: they fix dynamic dimensions (and must agree with fixed
    // ones). Inputs with a fully static shape in the model need none.
    std::map<std::string, std::vector<std::int64_t>> input_shapes;
    tpumodel::Precision precision = tpumodel::Precision::Fp32;
    // int8's calibration samples: whole samples of the one graph input in its ONNX order (the
    // batch axis's size times, flattened); needed for, and only taken with, Precision::Int8.
    std::vector<float> calibration;
};

// What the compiler did, for the report.
struct CompileSummary {
    std::string source;            // the ONNX file
    std::int64_t source_opset = 0; // its default-domain opset before conversion
    std::size_t onnx_nodes = 0;    // nodes in the ONNX graph
    std::size_t folded = 0;        // nodes folded into constants
    std::size_t batchnorms = 0;    // BatchNormalizations folded into their Conv
    std::size_t fused = 0;         // Relu nodes fused into their producer
    std::size_t transposes = 0;    // layout conversions inserted at the graph's edges
    std::size_t axes_moved = 0;    // Softmax/LogSoftmax moved to the last axis by 2 transposes
};

struct Compiled {
    tpumodel::Model model;
    CompileSummary summary;
};

// Anything the compiler refuses: a bad file, an opset outside 7-17, an unsupported op, a
// dynamic shape it cannot fix, an absurd shape, a broken graph. The message names the file and,
// where there is one, the node or tensor.
class CompileError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

Compiled compile_file(const std::string &onnx_path, const CompileOptions &options);
// The same for a model's bytes; `onnx_path` names it in messages and the report.
Compiled compile_bytes(const std::string &bytes, const std::string &onnx_path,
                       const CompileOptions &options);

// The report in the manner of edgetpu_compiler's: per op (fused ops as "Conv+Relu") the count,
// placement and card op, then every CPU node with the reason it is not on the card.
std::string report(const Compiled &c);

// "1x3x224x224" (or "1,3,224,224") as a shape; throws CompileError on anything else.
std::vector<std::int64_t> parse_shape(const std::string &text);

} // namespace tpu_onnx
