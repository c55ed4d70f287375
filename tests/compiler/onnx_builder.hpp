// SPDX-License-Identifier: MIT
// onnx_builder.hpp - the tests' ONNX models: tpu_onnx::ModelBuilder saved into this process's
// scratch directory for tpu-compile's front end, and deterministic test data.
#pragma once

#include <tpu_onnx/builder.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace compiler_test {

using tpu_onnx::AttrValue;
using tpu_onnx::Dim;

class OnnxBuilder : public tpu_onnx::ModelBuilder {
  public:
    explicit OnnxBuilder(std::int64_t opset = 17)
        : tpu_onnx::ModelBuilder(opset, "compiler_tests", "test") {}
    // Writes the model to scratch_path(file); that path.
    std::string save(const std::string &file) const;
};

// `file` in this process's scratch directory under the temporary directory.
std::string scratch_path(const std::string &file);

// A deterministic pseudo-random vector in [-1, 1).
std::vector<float> pattern(std::size_t n, std::uint32_t seed);

} // namespace compiler_test
