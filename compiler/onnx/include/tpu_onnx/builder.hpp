// SPDX-License-Identifier: MIT
// builder.hpp - ONNX models built in C++ the way onnx.helper builds them in Python: graph inputs
// with fixed or symbolic dimensions, outputs, initialisers, nodes with attributes, the opset.
// tpu-export writes checkpoints with it; the compiler's tests build their models with it.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace tpu_onnx {

// A dimension: a size, or a symbolic name such as "batch".
using Dim = std::variant<std::int64_t, std::string>;
using AttrValue =
    std::variant<std::int64_t, float, std::string, std::vector<std::int64_t>, std::vector<float>>;

class ModelBuilder {
  public:
    // An empty graph `graph_name` importing the default domain at `opset`, IR version 8.
    explicit ModelBuilder(std::int64_t opset = 17, const std::string &producer = "tpu-stack",
                          const std::string &graph_name = "main");
    ModelBuilder &input(const std::string &name, const std::vector<Dim> &dims,
                        int elem_type = onnx::TensorProto_DataType_FLOAT);
    // An output of `rank` dimensions left to shape inference.
    ModelBuilder &output(const std::string &name, int rank,
                         int elem_type = onnx::TensorProto_DataType_FLOAT);
    // An output with its dimensions stated.
    ModelBuilder &output(const std::string &name, const std::vector<Dim> &dims,
                         int elem_type = onnx::TensorProto_DataType_FLOAT);
    ModelBuilder &floats(const std::string &name, const std::vector<std::int64_t> &dims,
                         const std::vector<float> &values);
    // An integer initialiser: int64, or (`elem_type`) int32, int8 or uint8.
    ModelBuilder &ints(const std::string &name, const std::vector<std::int64_t> &dims,
                       const std::vector<std::int64_t> &values,
                       int elem_type = onnx::TensorProto_DataType_INT64);
    ModelBuilder &node(const std::string &op, const std::vector<std::string> &inputs,
                       const std::vector<std::string> &outputs, const std::string &name = "",
                       const std::vector<std::pair<std::string, AttrValue>> &attrs = {});
    onnx::ModelProto &proto() { return model_; }
    const onnx::ModelProto &proto() const { return model_; }
    // Writes the model to `path` crash-safely (a temporary file renamed over it); throws
    // std::runtime_error naming the file.
    void write(const std::string &path) const;

  private:
    onnx::ModelProto model_;
};

} // namespace tpu_onnx
