// SPDX-License-Identifier: MIT
// conv2d.cpp - a 2-D convolution + bias on NHWC images: weights HWIO [KH, KW, C / G, F] (He,
// fan-in KH KW C / G), bias [F] (zeros), strides, zero padding and G groups (filter f sees the
// channels of group f / (F / G)). Forward sums the taps in row-major order, channels ascending,
// from 0, then adds the bias (the order of the hand-written CPU CNN it replaced); the vjp adds
// dW, db and dx from dy.
#include "rules.hpp"

#include <stdexcept>

namespace tpu_nn {

namespace {

Shape infer(const Attrs &a, std::span<const Shape> in) {
    expect_image(in[0], "a convolution");
    const Window &k = a.window;
    const std::size_t h = in[0][0], w = in[0][1], c = in[0][2];
    if (a.units == 0 || k.kh == 0 || k.kw == 0 || k.sh == 0 || k.sw == 0 || a.groups == 0)
        throw std::invalid_argument("filters, kernel size, strides and groups must be >= 1");
    if (c % a.groups != 0)
        throw std::invalid_argument(std::to_string(a.groups) + " groups do not divide the " +
                                    std::to_string(c) + " input channels");
    if (a.units % a.groups != 0)
        throw std::invalid_argument(std::to_string(a.groups) + " groups do not divide the " +
                                    std::to_string(a.units) + " filters");
    if (k.ph >= k.kh || k.pw >= k.kw)
        throw std::invalid_argument("padding " + std::to_string(k.ph) + "x" + std::to_string(k.pw) +
                                    " must be below the kernel " + std::to_string(k.kh) + "x" +
                                    std::to_string(k.kw));
    if (h + 2 * k.ph < k.kh || w + 2 * k.pw < k.kw)
        throw std::invalid_argument("a " + std::to_string(k.kh) + "x" + std::to_string(k.kw) +
                                    " kernel does not fit the " + to_string(in[0]) +
                                    " input padded by " + std::to_string(k.ph));
    return {k.out_h(h), k.out_w(w), a.units};
}

std::vector<ParamSlot> params(const Attrs &a, std::span<const Shape> in) {
    const std::size_t cg = in[0][2] / a.groups, kh = a.window.kh, kw = a.window.kw;
    return {{"w", {kh, kw, cg, a.units}, Init::He, kh * kw * cg}, {"b", {a.units}, Init::Zeros, 0}};
}

// Calls f(out pixel offset, in pixel offset, tap index) for every tap inside the image.
template <typename F> void each_tap(const CpuCall &c, F &&f) {
    const Window &k = c.attrs.window;
    const std::size_t h = c.in_shapes[0][0], w = c.in_shapes[0][1];
    const std::size_t oh = c.out_shape[0], ow = c.out_shape[1];
    for (std::size_t n = 0; n < c.batch; ++n)
        for (std::size_t oy = 0; oy < oh; ++oy)
            for (std::size_t ox = 0; ox < ow; ++ox)
                for (std::size_t ky = 0; ky < k.kh; ++ky) {
                    const std::size_t iy = oy * k.sh + ky;
                    if (iy < k.ph || iy - k.ph >= h)
                        continue;
                    for (std::size_t kx = 0; kx < k.kw; ++kx) {
                        const std::size_t ix = ox * k.sw + kx;
                        if (ix < k.pw || ix - k.pw >= w)
                            continue;
                        f((n * oh + oy) * ow + ox, (n * h + iy - k.ph) * w + ix - k.pw,
                          ky * k.kw + kx);
                    }
                }
}

void forward(const CpuCall &c) {
    const std::size_t ch = c.in_shapes[0][2], f = c.attrs.units, g = c.attrs.groups;
    const std::size_t cg = ch / g, fg = f / g;
    const float *w = c.params[0], *b = c.params[1];
    const std::size_t pixels = c.batch * c.out_shape[0] * c.out_shape[1];
    std::fill(c.out, c.out + pixels * f, 0.0f);
    each_tap(c, [&](std::size_t o, std::size_t i, std::size_t tap) {
        float *out = c.out + o * f;
        const float *in = c.in[0] + i * ch;
        for (std::size_t gi = 0; gi < g; ++gi)
            for (std::size_t cc = 0; cc < cg; ++cc) {
                const float xv = in[gi * cg + cc];
                if (xv == 0.0f)
                    continue;
                const float *wr = w + (tap * cg + cc) * f + gi * fg;
                float *og = out + gi * fg;
                for (std::size_t j = 0; j < fg; ++j)
                    og[j] += xv * wr[j];
            }
    });
    for (std::size_t p = 0; p < pixels; ++p)
        for (std::size_t j = 0; j < f; ++j)
            c.out[p * f + j] += b[j];
}

void vjp(const CpuCall &c) {
    const std::size_t ch = c.in_shapes[0][2], f = c.attrs.units, g = c.attrs.groups;
    const std::size_t cg = ch / g, fg = f / g;
    const float *w = c.params[0];
    float *dw = c.dparams[0], *db = c.dparams[1], *dx = c.din[0];
    const std::size_t pixels = c.batch * c.out_shape[0] * c.out_shape[1];
    for (std::size_t p = 0; p < pixels; ++p)
        for (std::size_t j = 0; j < f; ++j)
            db[j] += c.dout[p * f + j];
    each_tap(c, [&](std::size_t o, std::size_t i, std::size_t tap) {
        const float *dy = c.dout + o * f;
        const float *in = c.in[0] + i * ch;
        for (std::size_t gi = 0; gi < g; ++gi)
            for (std::size_t cc = 0; cc < cg; ++cc) {
                const std::size_t wo = (tap * cg + cc) * f + gi * fg;
                const float xv = in[gi * cg + cc];
                float acc = 0.0f;
                for (std::size_t j = 0; j < fg; ++j) {
                    dw[wo + j] += xv * dy[gi * fg + j];
                    acc += w[wo + j] * dy[gi * fg + j];
                }
                if (dx != nullptr)
                    dx[i * ch + gi * cg + cc] += acc;
            }
    });
}

} // namespace

const OpRule conv2d_rule{"conv2d", 1, infer, params, forward, vjp};

} // namespace tpu_nn
