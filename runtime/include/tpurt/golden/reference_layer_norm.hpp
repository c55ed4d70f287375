// SPDX-License-Identifier: MIT
// reference_layer_norm.hpp - the CPU golden model of layer normalisation as
// codegen/layer_norm_compiler.hpp's programs compute it, forward and gradients, over the rows of
// a [rows, cols] fp32 array.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace tpurt {

// layer_norm_compiler.hpp's binary32 steps, one operation at a time: sums from the first
// element (REDUCE), ACTIVATE's x * 1 + 0 before a scale, RSQRT as a square root and a division.
inline float reference_row_sum(const float *v, std::size_t n) {
    float s = v[0];
    for (std::size_t i = 1; i < n; ++i)
        s += v[i];
    return s;
}

// y = gamma x-hat + beta (beta empty: y zeros); with dy, dx and the sums of dgamma, dbeta.
struct LayerNormReference {
    std::vector<float> y, dx, dgamma, dbeta;
};

inline LayerNormReference reference_layer_norm(const std::vector<float> &x,
                                               const std::vector<float> &gamma,
                                               const std::vector<float> &beta,
                                               const std::vector<float> &dy, std::size_t rows,
                                               std::size_t cols, float eps) {
    const float inv = 1.0f / static_cast<float>(cols);
    LayerNormReference out{std::vector<float>(x.size()), std::vector<float>(x.size()),
                           std::vector<float>(cols, 0.0f), std::vector<float>(cols, 0.0f)};
    std::vector<float> d(cols), q(cols), g(cols), t(cols);
    for (std::size_t r = 0; r < rows; ++r) {
        const float *xr = &x[r * cols];
        const float *dyr = dy.empty() ? nullptr : &dy[r * cols];
        const float mean = (reference_row_sum(xr, cols) + 0.0f) * inv;
        for (std::size_t c = 0; c < cols; ++c) {
            d[c] = xr[c] - mean;
            q[c] = d[c] * d[c];
        }
        const float var = (reference_row_sum(q.data(), cols) + 0.0f) * inv;
        const float rstd = 1.0f / std::sqrt((var + eps) + 0.0f);
        for (std::size_t c = 0; c < cols; ++c) {
            d[c] = d[c] * rstd; // xh
            const float scaled = d[c] * gamma[c];
            out.y[r * cols + c] = beta.empty() ? 0.0f : scaled + beta[c];
            if (!dyr)
                continue;
            out.dbeta[c] += dyr[c];
            const float p = dyr[c] * d[c];
            out.dgamma[c] += p;
            g[c] = dyr[c] * gamma[c];
            t[c] = g[c] * d[c];
        }
        if (!dyr)
            continue;
        const float a = (reference_row_sum(g.data(), cols) + 0.0f) * inv;
        const float b = (reference_row_sum(t.data(), cols) + 0.0f) * inv;
        for (std::size_t c = 0; c < cols; ++c) {
            const float u = d[c] * b;
            out.dx[r * cols + c] = ((g[c] - a) - u) * rstd;
        }
    }
    return out;
}

} // namespace tpurt
