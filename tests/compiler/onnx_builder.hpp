// SPDX-License-Identifier: MIT
// onnx_builder.hpp - small ONNX models built in the tests (onnx.helper's way, in C++): inputs
// with fixed or symbolic dimensions, initialisers, nodes with attributes, the opset; written to
// a temporary file for tpu-compile's front end.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace compiler_test {

// A dimension: a size, or a symbolic name such as "batch".
using Dim = std::variant<std::int64_t, std::string>;
using AttrValue =
    std::variant<std::int64_t, float, std::string, std::vector<std::int64_t>, std::vector<float>>;

class OnnxBuilder {
  public:
    explicit OnnxBuilder(std::int64_t opset = 17);
    OnnxBuilder &input(const std::string &name, const std::vector<Dim> &dims,
                       int elem_type = onnx::TensorProto_DataType_FLOAT);
    // An output of `rank` dimensions left to shape inference.
    OnnxBuilder &output(const std::string &name, int rank,
                        int elem_type = onnx::TensorProto_DataType_FLOAT);
    OnnxBuilder &floats(const std::string &name, const std::vector<std::int64_t> &dims,
                        const std::vector<float> &values);
    OnnxBuilder &ints(const std::string &name, const std::vector<std::int64_t> &dims,
                      const std::vector<std::int64_t> &values);
    OnnxBuilder &node(const std::string &op, const std::vector<std::string> &inputs,
                      const std::vector<std::string> &outputs, const std::string &name = "",
                      const std::vector<std::pair<std::string, AttrValue>> &attrs = {});
    onnx::ModelProto &proto() { return model_; }
    // Writes the model to scratch_path(file); that path.
    std::string save(const std::string &file) const;

  private:
    onnx::ModelProto model_;
};

// `file` in this process's scratch directory under the temporary directory.
std::string scratch_path(const std::string &file);

// A deterministic pseudo-random vector in [-1, 1).
std::vector<float> pattern(std::size_t n, std::uint32_t seed);

} // namespace compiler_test
