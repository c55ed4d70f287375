// SPDX-License-Identifier: MIT
// onnx_builder.hpp - the tests' ONNX models: tpu_onnx::ModelBuilder saved into this process's
// scratch directory for tpu-compile's front end, deterministic test data, and float32 tensors to
// and from the executors.
#pragma once

#include <tpu_onnx/builder.hpp>
#include <tpumodel/model.hpp>

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

// A float32 graph input of `shape` holding `v`; a float32 tensor's values (a test failure for
// another dtype).
tpumodel::Tensor float_tensor(const std::vector<std::int64_t> &shape, const std::vector<float> &v);
std::vector<float> float_values(const tpumodel::Tensor &t);

} // namespace compiler_test
