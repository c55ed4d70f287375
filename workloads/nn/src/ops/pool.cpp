// SPDX-License-Identifier: MIT
// pool.cpp - max or average pooling over windows of an NHWC image, as the card's pool2d: max
// pads with -inf and its gradient goes to the window's first maximum in row-major order;
// average pads with 0 and divides by the whole window (count_include_pad), its gradient shared
// equally (the padding's share dropped).
#include "rules.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace tpu_nn {

namespace {

Shape infer(const Attrs &a, std::span<const Shape> in) {
    expect_image(in[0], "pooling");
    const Window &k = a.window;
    if (k.kh == 0 || k.kw == 0 || k.sh == 0 || k.sw == 0)
        throw std::invalid_argument("window and strides must be >= 1");
    if (k.kh > 16 || k.kw > 16)
        throw std::invalid_argument("a window is at most 16x16 (the card's POOL)");
    if (k.ph >= k.kh || k.pw >= k.kw)
        throw std::invalid_argument("padding must be below the window");
    if (in[0][0] + 2 * k.ph < k.kh || in[0][1] + 2 * k.pw < k.kw)
        throw std::invalid_argument("a " + std::to_string(k.kh) + "x" + std::to_string(k.kw) +
                                    " window does not fit the " + to_string(in[0]) + " input");
    return {k.out_h(in[0][0]), k.out_w(in[0][1]), in[0][2]};
}

std::vector<ParamSlot> params(const Attrs &, std::span<const Shape>) {
    return {};
}

// Calls f(out element, in element or npos for padding) for each window element of each output
// element, in row-major window order.
template <typename F> void each_window(const CpuCall &c, F &&f) {
    const Window &k = c.attrs.window;
    const std::size_t h = c.in_shapes[0][0], w = c.in_shapes[0][1], ch = c.in_shapes[0][2];
    const std::size_t oh = c.out_shape[0], ow = c.out_shape[1];
    for (std::size_t n = 0; n < c.batch; ++n)
        for (std::size_t oy = 0; oy < oh; ++oy)
            for (std::size_t ox = 0; ox < ow; ++ox)
                for (std::size_t ci = 0; ci < ch; ++ci) {
                    const std::size_t o = ((n * oh + oy) * ow + ox) * ch + ci;
                    for (std::size_t ky = 0; ky < k.kh; ++ky)
                        for (std::size_t kx = 0; kx < k.kw; ++kx) {
                            const std::size_t iy = oy * k.sh + ky, ix = ox * k.sw + kx;
                            const bool inside =
                                iy >= k.ph && iy - k.ph < h && ix >= k.pw && ix - k.pw < w;
                            f(o, inside ? ((n * h + iy - k.ph) * w + ix - k.pw) * ch + ci
                                        : std::size_t(-1));
                        }
                }
}

float window_size(const CpuCall &c) {
    return float(c.attrs.window.kh * c.attrs.window.kw);
}

void forward(const CpuCall &c) {
    const std::size_t count = c.batch * elements(c.out_shape);
    const bool max = c.attrs.pool == PoolKind::Max;
    std::fill(c.out, c.out + count, max ? -std::numeric_limits<float>::infinity() : 0.0f);
    each_window(c, [&](std::size_t o, std::size_t i) {
        const float v = i == std::size_t(-1) ? (max ? c.out[o] : 0.0f) : c.in[0][i];
        c.out[o] = max ? std::max(c.out[o], v) : c.out[o] + v;
    });
    if (!max)
        for (std::size_t o = 0; o < count; ++o)
            c.out[o] /= window_size(c);
}

void vjp(const CpuCall &c) {
    float *dx = c.din[0];
    if (dx == nullptr)
        return;
    const std::size_t count = c.batch * elements(c.out_shape);
    if (c.attrs.pool == PoolKind::Avg) {
        each_window(c, [&](std::size_t o, std::size_t i) {
            if (i != std::size_t(-1))
                dx[i] += c.dout[o] / window_size(c);
        });
        return;
    }
    std::vector<bool> given(count, false);
    each_window(c, [&](std::size_t o, std::size_t i) {
        if (!given[o] && i != std::size_t(-1) && c.in[0][i] == c.out[o]) {
            dx[i] += c.dout[o];
            given[o] = true;
        }
    });
}

} // namespace

const OpRule pool_rule{"pool", 1, infer, params, forward, vjp};

} // namespace tpu_nn
