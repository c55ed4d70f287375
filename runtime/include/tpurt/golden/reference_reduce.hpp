// SPDX-License-Identifier: MIT
// reference_reduce.hpp - the CPU golden model of the card's fp32 and bf16 reductions over one
// axis (codegen/axis_compiler.hpp: REDUCE, then for a mean the epilogue's scale): over the
// middle axis of an [outer, length, inner] array, a binary32 sum from +0.0f in ascending order
// along the axis, or the maximum; a mean is that sum times 1.0f / length, rounded once.
#pragma once

#include <cstddef>
#include <limits>
#include <span>
#include <vector>

namespace tpurt {

enum class ReduceKind { Sum, Max, Mean };

// The reduction of a (outer * length * inner values, row-major) over its middle axis: outer *
// inner values.
inline std::vector<float> reference_reduce_axis(std::span<const float> a, std::size_t outer,
                                                std::size_t length, std::size_t inner,
                                                ReduceKind kind) {
    std::vector<float> r(outer * inner);
    for (std::size_t o = 0; o < outer; ++o)
        for (std::size_t i = 0; i < inner; ++i) {
            float sum = 0, m = -std::numeric_limits<float>::infinity();
            for (std::size_t l = 0; l < length; ++l) {
                const float v = a[(o * length + l) * inner + i];
                sum += v;
                m = v > m ? v : m;
            }
            if (kind == ReduceKind::Mean)
                sum *= 1.0f / static_cast<float>(length);
            r[o * inner + i] = kind == ReduceKind::Max ? m : sum;
        }
    return r;
}

} // namespace tpurt
