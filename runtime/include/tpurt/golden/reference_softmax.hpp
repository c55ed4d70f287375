// SPDX-License-Identifier: MIT
// reference_softmax.hpp - the CPU golden model of the card's fp32 softmax over the rows of a
// [rows, cols] array, step by step as codegen/train_compiler.hpp's program computes it: the
// row's maximum (REDUCE MAX), w = x - max, e = EXP(w) (golden/reference_exp.hpp), s = the
// binary32 sum of e from +0.0f in ascending order (REDUCE SUM), out = e / s (VECTOR DIV).
#pragma once

#include "tpurt/golden/reference_exp.hpp"

#include <cstddef>
#include <limits>
#include <span>
#include <vector>

namespace tpurt {

inline std::vector<float> reference_softmax(std::span<const float> x, std::size_t rows,
                                            std::size_t cols) {
    std::vector<float> out(rows * cols);
    for (std::size_t r = 0; r < rows; ++r) {
        const std::span<const float> row = x.subspan(r * cols, cols);
        float m = -std::numeric_limits<float>::infinity(), s = 0;
        for (float v : row)
            m = v > m ? v : m;
        for (std::size_t c = 0; c < cols; ++c) {
            out[r * cols + c] = reference_exp(row[c] - m);
            s += out[r * cols + c];
        }
        for (std::size_t c = 0; c < cols; ++c)
            out[r * cols + c] /= s;
    }
    return out;
}

} // namespace tpurt
