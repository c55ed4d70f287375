// SPDX-License-Identifier: MIT
// layer_norm.cpp - layer normalisation over the last dimension (an image's channels at each
// pixel, or a vector's features): y = (x - mean) / sqrt(var + eps) g + b with the biased
// variance, g [C] (ones) and b [C] (zeros), as the card's layer_norm. The vjp recomputes the
// statistics: dx = (dxh - mean(dxh) - xh mean(dxh xh)) / sqrt(var + eps) with dxh = dy g.
#include "rules.hpp"

#include <cmath>
#include <stdexcept>

namespace tpu_nn {

namespace {

Shape infer(const Attrs &a, std::span<const Shape> in) {
    if (in[0].back() < 2)
        throw std::invalid_argument("normalises over the last dimension, which needs at least 2 "
                                    "elements, not " +
                                    to_string(in[0]));
    if (!(a.eps > 0.0f))
        throw std::invalid_argument("eps must be > 0");
    return in[0];
}

std::vector<ParamSlot> params(const Attrs &, std::span<const Shape> in) {
    return {{"g", {in[0].back()}, Init::Ones, 0}, {"b", {in[0].back()}, Init::Zeros, 0}};
}

struct Stats {
    float mean, inv;
};

Stats stats(const float *x, std::size_t n, float eps) {
    double sum = 0.0, sq = 0.0;
    for (std::size_t i = 0; i < n; ++i)
        sum += x[i];
    const double mean = sum / double(n);
    for (std::size_t i = 0; i < n; ++i)
        sq += (x[i] - mean) * (x[i] - mean);
    return {float(mean), float(1.0 / std::sqrt(sq / double(n) + eps))};
}

void forward(const CpuCall &c) {
    const std::size_t n = c.out_shape.back(), rows = c.batch * elements(c.out_shape) / n;
    const float *g = c.params[0], *b = c.params[1];
    for (std::size_t r = 0; r < rows; ++r) {
        const float *x = c.in[0] + r * n;
        const Stats s = stats(x, n, c.attrs.eps);
        for (std::size_t i = 0; i < n; ++i)
            c.out[r * n + i] = (x[i] - s.mean) * s.inv * g[i] + b[i];
    }
}

void vjp(const CpuCall &c) {
    const std::size_t n = c.out_shape.back(), rows = c.batch * elements(c.out_shape) / n;
    const float *g = c.params[0];
    float *dg = c.dparams[0], *db = c.dparams[1], *dx = c.din[0];
    std::vector<float> xh(n), dxh(n);
    for (std::size_t r = 0; r < rows; ++r) {
        const float *x = c.in[0] + r * n, *dy = c.dout + r * n;
        const Stats s = stats(x, n, c.attrs.eps);
        double m1 = 0.0, m2 = 0.0;
        for (std::size_t i = 0; i < n; ++i) {
            xh[i] = (x[i] - s.mean) * s.inv;
            dxh[i] = dy[i] * g[i];
            dg[i] += dy[i] * xh[i];
            db[i] += dy[i];
            m1 += dxh[i];
            m2 += dxh[i] * xh[i];
        }
        if (dx != nullptr)
            for (std::size_t i = 0; i < n; ++i)
                dx[r * n + i] +=
                    (dxh[i] - float(m1 / double(n)) - xh[i] * float(m2 / double(n))) * s.inv;
    }
}

} // namespace

const OpRule layer_norm_rule{"layer_norm", 1, infer, params, forward, vjp};

} // namespace tpu_nn
