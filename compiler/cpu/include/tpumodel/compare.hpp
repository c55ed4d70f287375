// SPDX-License-Identifier: MIT
// compare.hpp - a result against ONNX's expected output as ONNX's backend test runner compares
// them: the same dtype and shape, and every element with |a - b| <= 1e-7 + 1e-3 |b| (NaN
// equal to NaN). The node-test runners on the CPU (tests/compiler) and on the card
// (tpu-onnx-test) share it.
#pragma once

#include "tpumodel/model.hpp"

#include <string>

namespace tpumodel::cpu {

// "" when `got` matches `want`, else what differs ("element 3: got 0.5, want 0.25").
std::string onnx_mismatch(const Tensor &got, const Tensor &want);

} // namespace tpumodel::cpu
