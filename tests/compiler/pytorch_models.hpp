// SPDX-License-Identifier: MIT
// pytorch_models.hpp - the models pytorch_models.py exports, made once per test process in its
// scratch directory: each one's ONNX file, input and PyTorch's output.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace compiler_test {

struct PytorchModel {
    std::string name, onnx, input; // e.g. "resnet18", its .onnx path, the input's name
    std::vector<std::int64_t> shape;
    std::vector<float> x, y; // the input and PyTorch's output
};

// Runs pytorch_models.py (once; later calls return the same models). Fails the test with the
// script's command line if it fails.
const std::vector<PytorchModel> &pytorch_models();

} // namespace compiler_test
