// SPDX-License-Identifier: MIT
// cnn_reference.cpp - the CNNs on the CPU: the fp32 forward pass (the trained model, and the
// ranges the quantiser calibrates on), and the card's bf16 and int8 arithmetic block by block
// through tpurt::reference_conv2d_layer, the documented per-channel multiply, max pooling and
// conversion, then the dense layers of reference.cpp.
#include "tpu_infer/reference.hpp"

#include "byte_views.hpp"

#include <tpurt/golden/reference_conv2d.hpp>
#include <tpurt/ops/conv2d.hpp>

#include <algorithm>
#include <cmath>

namespace tpu_infer {
namespace {

float value_of(float v) {
    return v;
}
float value_of(tpurt::Bf16 v) {
    return v.to_float();
}

// 2 x 2 max pooling at stride 2 of NHWC images (odd sizes floor), as the card's POOL MAX: the
// first maximum in window order, NaN if the window holds one.
template <typename T>
std::vector<T> max_pool(const std::vector<T> &x, std::size_t batch, const ImageShape &in) {
    const std::size_t oh = in.height / cnn_pool, ow = in.width / cnn_pool, c = in.channels;
    std::vector<T> y(batch * oh * ow * c);
    for (std::size_t n = 0; n < batch; ++n)
        for (std::size_t oy = 0; oy < oh; ++oy)
            for (std::size_t ox = 0; ox < ow; ++ox)
                for (std::size_t ch = 0; ch < c; ++ch) {
                    T best{};
                    bool first = true;
                    for (std::size_t ky = 0; ky < cnn_pool; ++ky)
                        for (std::size_t kx = 0; kx < cnn_pool; ++kx) {
                            const T v = x[((n * in.height + oy * cnn_pool + ky) * in.width +
                                           ox * cnn_pool + kx) *
                                              c +
                                          ch];
                            if (first || std::isnan(value_of(v)) ||
                                (!std::isnan(value_of(best)) && value_of(v) > value_of(best)))
                                best = v;
                            first = false;
                        }
                    y[((n * oh + oy) * ow + ox) * c + ch] = best;
                }
    return y;
}

tpurt::Conv2dShape conv_shape(std::size_t batch, const ImageShape &in, std::size_t filters) {
    return {.batch = std::uint32_t(batch),
            .height = std::uint32_t(in.height),
            .width = std::uint32_t(in.width),
            .channels = std::uint32_t(in.channels),
            .kernel_h = std::uint32_t(cnn_kernel),
            .kernel_w = std::uint32_t(cnn_kernel),
            .filters = std::uint32_t(filters),
            .pad_h = std::uint32_t(cnn_kernel / 2),
            .pad_w = std::uint32_t(cnn_kernel / 2)};
}

// The fp32 convolution + bias + ReLU of one block (plain loops, taps and channels ascending).
std::vector<float> fp32_conv_relu(const std::vector<float> &x, std::size_t batch,
                                  const ImageShape &in, const FloatConv &conv) {
    const std::size_t h = in.height, w = in.width, pad = cnn_kernel / 2;
    std::vector<float> y(batch * h * w * conv.out);
    for (std::size_t n = 0; n < batch; ++n)
        for (std::size_t oy = 0; oy < h; ++oy)
            for (std::size_t ox = 0; ox < w; ++ox) {
                float *out = &y[((n * h + oy) * w + ox) * conv.out];
                std::copy(conv.b.begin(), conv.b.end(), out);
                for (std::size_t ky = 0; ky < cnn_kernel; ++ky)
                    for (std::size_t kx = 0; kx < cnn_kernel; ++kx) {
                        const std::size_t iy = oy + ky, ix = ox + kx; // padded coordinates
                        if (iy < pad || ix < pad || iy - pad >= h || ix - pad >= w)
                            continue;
                        const float *px = &x[((n * h + iy - pad) * w + ix - pad) * conv.in];
                        const float *wt = &conv.w[(ky * cnn_kernel + kx) * conv.in * conv.out];
                        for (std::size_t c = 0; c < conv.in; ++c)
                            for (std::size_t f = 0; f < conv.out; ++f)
                                out[f] += px[c] * wt[c * conv.out + f];
                    }
                for (std::size_t f = 0; f < conv.out; ++f)
                    out[f] = std::max(out[f], 0.0f);
            }
    return y;
}

} // namespace

std::vector<std::vector<float>> fp32_activations(const FloatCnn &net, const float *raw,
                                                 std::size_t batch) {
    std::vector<std::vector<float>> acts(1);
    acts[0].resize(batch * net.inputs());
    std::transform(raw, raw + acts[0].size(), acts[0].begin(),
                   [&](float v) { return net.input.apply(v); });
    const std::vector<ImageShape> shapes = block_shapes(net.image, net.convs);
    for (std::size_t i = 0; i < net.convs.size(); ++i) {
        const ImageShape conv_out{shapes[i].height, shapes[i].width, net.convs[i].out};
        acts.push_back(
            max_pool(fp32_conv_relu(acts.back(), batch, shapes[i], net.convs[i]), batch, conv_out));
    }
    // The flattened last block is the first dense layer's input: the dense part is the MLP's.
    const FloatMlp head{net.name, InputTransform{}, net.dense};
    std::vector<std::vector<float>> dense = fp32_activations(head, acts.back().data(), batch);
    acts.insert(acts.end(), std::make_move_iterator(dense.begin() + 1),
                std::make_move_iterator(dense.end()));
    return acts;
}

Int8LayerConstants int8_conv_constants(const Int8Cnn &net, std::size_t conv) {
    const Int8Conv &l = net.convs.at(conv);
    const float next =
        conv + 1 < net.convs.size() ? net.convs[conv + 1].x_scale : net.dense.front().x_scale;
    return requantisation(l.x_scale, l.w_scale, l.b, next);
}

std::vector<float> bf16_cnn_logits(const FloatCnn &net, const float *raw, std::size_t batch) {
    std::vector<tpurt::Bf16> x = bf16_input(net.input, raw, batch * net.inputs());
    const std::vector<ImageShape> shapes = block_shapes(net.image, net.convs);
    for (std::size_t i = 0; i < net.convs.size(); ++i) {
        const FloatConv &c = net.convs[i];
        std::vector<tpurt::Bf16> w(c.w.size());
        std::transform(c.w.begin(), c.w.end(), w.begin(), tpurt::Bf16::from_float);
        const std::vector<tpurt::Bf16> y =
            detail::from_bytes<tpurt::Bf16>(tpurt::reference_conv2d_layer(
                tpurt::DType::Bf16, detail::bytes(x), detail::bytes(w), c.b,
                {.function = tpurt::Activation::Relu, .out_type = tpurt::DType::Bf16},
                conv_shape(batch, shapes[i], c.out)));
        x = max_pool(y, batch, {shapes[i].height, shapes[i].width, c.out});
    }
    return bf16_dense_logits(net.dense, std::move(x), batch);
}

std::vector<float> int8_cnn_logits(const Int8Cnn &net, const float *raw, std::size_t batch) {
    std::vector<std::int8_t> x =
        int8_input(net.input, net.convs.front().x_scale, raw, batch * net.inputs());
    const std::vector<ImageShape> shapes = block_shapes(net.image, net.convs);
    for (std::size_t i = 0; i < net.convs.size(); ++i) {
        const Int8Conv &c = net.convs[i];
        const Int8LayerConstants k = int8_conv_constants(net, i);
        std::vector<float> u = detail::from_bytes<float>(tpurt::reference_conv2d_layer(
            tpurt::DType::Int8, detail::bytes(x), detail::bytes(c.wq), k.bias,
            {.function = tpurt::Activation::Relu, .out_type = tpurt::DType::Fp32},
            conv_shape(batch, shapes[i], c.out)));
        for (std::size_t e = 0; e < u.size(); ++e)
            u[e] *= k.mult[e % c.out];
        x = convert_int8(max_pool(u, batch, {shapes[i].height, shapes[i].width, c.out}));
    }
    return int8_dense_logits(net.dense, std::move(x), batch);
}

} // namespace tpu_infer
