// SPDX-License-Identifier: MIT
// compare.cpp - ONNX's comparison of a result with its expected output (compare.hpp).
#include "tpumodel/compare.hpp"

#include "tpumodel/cpu_kernels.hpp"

#include <cmath>

namespace tpumodel::cpu {

std::string onnx_mismatch(const Tensor &got, const Tensor &want) {
    if (got.dtype != want.dtype || got.shape != want.shape)
        return std::string("got ") + dtype_name(got.dtype) + " " + got.shape_string() + ", want " +
               dtype_name(want.dtype) + " " + want.shape_string();
    for (std::uint64_t i = 0; i < want.element_count(); ++i) {
        const double a = real_at(got, i), b = real_at(want, i);
        if (a == b || (std::isnan(a) && std::isnan(b)) ||
            std::fabs(a - b) <= 1e-7 + 1e-3 * std::fabs(b))
            continue;
        return "element " + std::to_string(i) + ": got " + std::to_string(a) + ", want " +
               std::to_string(b);
    }
    return "";
}

} // namespace tpumodel::cpu
