// SPDX-License-Identifier: MIT
// cpu_cnn.cpp - forward and backward passes of the CPU CNN (cpu_cnn.hpp): 3x3 convolutions in
// NHWC / HWIO with zero padding 1, 2x2 max pooling with its first-maximum routing, the
// per-channel bias and ReLU after the pooling, and the dense layers of a CpuMlp.
#include "tpu_model/cpu_cnn.hpp"

#include <tpu_data/batches.hpp>
#include <tpu_data/error.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tpu_model {

namespace {

std::vector<std::size_t> head_sizes(const CnnShape &s) {
    std::vector<std::size_t> sizes = {s.flat_size()};
    sizes.insert(sizes.end(), s.hidden.begin(), s.hidden.end());
    sizes.push_back(s.classes);
    return sizes;
}

// z[n][y][x][f] = sum over taps and channels of x[n][y+ky-1][x+kx-1][c] w[ky][kx][c][f].
void conv_forward(const float *x, const Conv3x3 &l, std::size_t n, std::size_t h, std::size_t w,
                  float *z) {
    std::fill(z, z + n * h * w * l.out, 0.0f);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t oy = 0; oy < h; ++oy)
            for (std::size_t ox = 0; ox < w; ++ox) {
                float *out = z + ((i * h + oy) * w + ox) * l.out;
                for (std::size_t ky = 0; ky < 3; ++ky) {
                    const std::size_t iy = oy + ky;
                    if (iy < 1 || iy > h)
                        continue;
                    for (std::size_t kx = 0; kx < 3; ++kx) {
                        const std::size_t ix = ox + kx;
                        if (ix < 1 || ix > w)
                            continue;
                        const float *in = x + ((i * h + iy - 1) * w + ix - 1) * l.in;
                        const float *wt = l.w.data() + (ky * 3 + kx) * l.in * l.out;
                        for (std::size_t c = 0; c < l.in; ++c) {
                            const float xv = in[c];
                            if (xv == 0.0f) // ReLU's zeros, the next block's input
                                continue;
                            const float *wr = wt + c * l.out;
                            for (std::size_t f = 0; f < l.out; ++f)
                                out[f] += xv * wr[f];
                        }
                    }
                }
            }
}

// The convolution's gradients from dz: dw (and dx if not null) from zero. The loops run over
// (tap, filter, channel) with the channel innermost, on copies of w and dw in that order, so
// that they vectorise and skip the zero gradients (most of them, after the pooling).
void conv_backward(const float *x, Conv3x3 &l, std::size_t n, std::size_t h, std::size_t w,
                   const float *dz, float *dx) {
    const std::size_t in = l.in, out = l.out;
    std::vector<float> wt(9 * out * in), dwt(9 * out * in, 0.0f);
    for (std::size_t tap = 0; tap < 9; ++tap)
        for (std::size_t c = 0; c < in; ++c)
            for (std::size_t f = 0; f < out; ++f)
                wt[(tap * out + f) * in + c] = l.w[(tap * in + c) * out + f];
    if (dx != nullptr)
        std::fill(dx, dx + n * h * w * in, 0.0f);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t oy = 0; oy < h; ++oy)
            for (std::size_t ox = 0; ox < w; ++ox) {
                const float *g = dz + ((i * h + oy) * w + ox) * out;
                for (std::size_t ky = 0; ky < 3; ++ky) {
                    const std::size_t iy = oy + ky;
                    if (iy < 1 || iy > h)
                        continue;
                    for (std::size_t kx = 0; kx < 3; ++kx) {
                        const std::size_t ix = ox + kx;
                        if (ix < 1 || ix > w)
                            continue;
                        const std::size_t at = ((i * h + iy - 1) * w + ix - 1) * in;
                        const std::size_t tap = ky * 3 + kx;
                        for (std::size_t f = 0; f < out; ++f) {
                            const float gv = g[f];
                            if (gv == 0.0f)
                                continue;
                            float *dwr = dwt.data() + (tap * out + f) * in;
                            for (std::size_t c = 0; c < in; ++c)
                                dwr[c] += gv * x[at + c];
                            if (dx == nullptr)
                                continue;
                            const float *wr = wt.data() + (tap * out + f) * in;
                            for (std::size_t c = 0; c < in; ++c)
                                dx[at + c] += gv * wr[c];
                        }
                    }
                }
            }
    for (std::size_t tap = 0; tap < 9; ++tap)
        for (std::size_t c = 0; c < in; ++c)
            for (std::size_t f = 0; f < out; ++f)
                l.dw[(tap * in + c) * out + f] = dwt[(tap * out + f) * in + c];
}

// 2x2 max pooling at stride 2 (floor) of z [n][h][w][c] into q, with each maximum's index.
void max_pool(const float *z, std::size_t n, std::size_t h, std::size_t w, std::size_t c, float *q,
              std::size_t *argmax) {
    const std::size_t oh = h / 2, ow = w / 2;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t oy = 0; oy < oh; ++oy)
            for (std::size_t ox = 0; ox < ow; ++ox)
                for (std::size_t k = 0; k < c; ++k) {
                    std::size_t best = ((i * h + 2 * oy) * w + 2 * ox) * c + k;
                    for (std::size_t dy = 0; dy < 2; ++dy)
                        for (std::size_t dx = 0; dx < 2; ++dx) {
                            const std::size_t e = ((i * h + 2 * oy + dy) * w + 2 * ox + dx) * c + k;
                            if (z[e] > z[best])
                                best = e;
                        }
                    const std::size_t o = ((i * oh + oy) * ow + ox) * c + k;
                    q[o] = z[best];
                    argmax[o] = best;
                }
}

const std::vector<float> &expect(const Checkpoint &c, const std::string &name,
                                 const std::vector<std::uint32_t> &shape) {
    const NamedTensor *t = c.find(name);
    if (t == nullptr)
        throw tpu_data::DataError("checkpoint of " + c.model, "no tensor " + name);
    if (t->shape != shape) {
        std::string want;
        for (std::uint32_t s : shape) {
            if (!want.empty())
                want += 'x';
            want += std::to_string(s);
        }
        throw tpu_data::DataError("checkpoint of " + c.model,
                                  "tensor " + name + " does not have this model's shape " + want);
    }
    return t->data;
}

} // namespace

std::string CnnShape::input_shape() const {
    return std::to_string(height) + "x" + std::to_string(width) + "x" + std::to_string(channels);
}

std::string CnnShape::name() const {
    std::string n = "cnn-" + input_shape();
    for (std::size_t f : filters)
        n += "-c" + std::to_string(f);
    n += "-d";
    for (std::size_t i = 0; i < hidden.size(); ++i) {
        if (i > 0)
            n += '-';
        n += std::to_string(hidden[i]);
    }
    return n + "-" + std::to_string(classes);
}

std::size_t CnnShape::block_height(std::size_t i) const {
    return height >> i;
}
std::size_t CnnShape::block_width(std::size_t i) const {
    return width >> i;
}
std::size_t CnnShape::flat_size() const {
    return block_height(filters.size()) * block_width(filters.size()) * filters.back();
}

CpuCnn::CpuCnn(const CnnShape &shape, std::uint64_t seed)
    : shape_(shape), head_(head_sizes(shape), seed + 1) {
    if (shape.filters.empty() || shape.classes == 0 || shape.channels == 0)
        throw std::invalid_argument("CpuCnn: needs at least one conv block and a class");
    if (shape.block_height(shape.filters.size()) == 0 ||
        shape.block_width(shape.filters.size()) == 0)
        throw std::invalid_argument("CpuCnn: the image is too small for its pooling");
    tpu_data::SplitMix64 rng(seed);
    for (std::size_t i = 0; i < shape.filters.size(); ++i) {
        Conv3x3 l;
        l.in = shape.block_channels(i);
        l.out = shape.filters[i];
        l.w.resize(9 * l.in * l.out);
        const float scale = std::sqrt(2.0f / float(9 * l.in));
        for (float &w : l.w)
            w = rng.normal() * scale;
        l.b.assign(l.out, 0.0f);
        l.dw.assign(l.w.size(), 0.0f);
        l.db.assign(l.out, 0.0f);
        convs_.push_back(std::move(l));
    }
}

const std::vector<float> &CpuCnn::forward(const float *x, std::size_t batch) {
    batch_ = batch;
    const std::size_t blocks = convs_.size();
    x_.resize(blocks + 1);
    z_.resize(blocks);
    argmax_.resize(blocks);
    x_[0].assign(x, x + batch * shape_.height * shape_.width * shape_.channels);
    for (std::size_t i = 0; i < blocks; ++i) {
        const Conv3x3 &l = convs_[i];
        const std::size_t h = shape_.block_height(i), w = shape_.block_width(i);
        z_[i].resize(batch * h * w * l.out);
        conv_forward(x_[i].data(), l, batch, h, w, z_[i].data());
        const std::size_t pooled = batch * (h / 2) * (w / 2) * l.out;
        x_[i + 1].resize(pooled);
        argmax_[i].resize(pooled);
        max_pool(z_[i].data(), batch, h, w, l.out, x_[i + 1].data(), argmax_[i].data());
        for (std::size_t e = 0; e < pooled; ++e)
            x_[i + 1][e] = std::max(x_[i + 1][e] + l.b[e % l.out], 0.0f);
    }
    return head_.forward(x_[blocks].data(), batch);
}

void CpuCnn::backward(const std::vector<float> &dlogits) {
    head_.backward(dlogits);
    std::vector<float> dp = head_.input_grad(); // at the last block's output
    for (std::size_t i = convs_.size(); i-- > 0;) {
        Conv3x3 &l = convs_[i];
        const std::size_t h = shape_.block_height(i), w = shape_.block_width(i);
        const std::vector<float> &p = x_[i + 1];
        std::fill(l.db.begin(), l.db.end(), 0.0f);
        std::vector<float> dz(z_[i].size(), 0.0f);
        for (std::size_t e = 0; e < p.size(); ++e) {
            const float dq = p[e] > 0.0f ? dp[e] : 0.0f; // through the ReLU
            l.db[e % l.out] += dq;
            dz[argmax_[i][e]] = dq; // windows do not overlap
        }
        std::vector<float> dx(i > 0 ? x_[i].size() : 0);
        conv_backward(x_[i].data(), l, batch_, h, w, dz.data(), i > 0 ? dx.data() : nullptr);
        dp = std::move(dx);
    }
}

std::vector<Param> CpuCnn::params() {
    std::vector<Param> p;
    for (std::size_t i = 0; i < convs_.size(); ++i) {
        p.push_back({".conv" + std::to_string(i) + ".w", &convs_[i].w, &convs_[i].dw});
        p.push_back({".conv" + std::to_string(i) + ".b", &convs_[i].b, &convs_[i].db});
    }
    for (Param &q : head_.params(".layer"))
        p.push_back(q);
    return p;
}

void CpuCnn::save(Checkpoint &c) const {
    for (std::size_t i = 0; i < convs_.size(); ++i) {
        const Conv3x3 &l = convs_[i];
        c.tensors.push_back({"conv" + std::to_string(i) + ".w",
                             {3, 3, std::uint32_t(l.in), std::uint32_t(l.out)},
                             l.w});
        c.tensors.push_back({"conv" + std::to_string(i) + ".b", {std::uint32_t(l.out)}, l.b});
    }
    head_.save(c);
}

void CpuCnn::load(const Checkpoint &c) {
    for (std::size_t i = 0; i < convs_.size(); ++i) {
        Conv3x3 &l = convs_[i];
        l.w = expect(c, "conv" + std::to_string(i) + ".w",
                     {3, 3, std::uint32_t(l.in), std::uint32_t(l.out)});
        l.b = expect(c, "conv" + std::to_string(i) + ".b", {std::uint32_t(l.out)});
    }
    head_.load(c);
}

} // namespace tpu_model
