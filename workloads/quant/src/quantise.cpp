// SPDX-License-Identifier: MIT
// quantise.cpp - per-channel weight scales, activation calibration and the int8 networks.
#include "tpu_quant/quantise.hpp"

#include "tpu_infer/reference.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tpu_quant {

std::vector<float> channel_scales(const std::vector<float> &w, std::size_t in, std::size_t out) {
    if (w.size() != in * out)
        throw std::invalid_argument("channel_scales: weights are not in x out");
    std::vector<float> max_abs(out, 0.0f);
    for (std::size_t k = 0; k < in; ++k)
        for (std::size_t n = 0; n < out; ++n)
            max_abs[n] = std::max(max_abs[n], std::fabs(w[k * out + n]));
    std::vector<float> scales(out);
    std::transform(max_abs.begin(), max_abs.end(), scales.begin(), activation_scale);
    return scales;
}

std::vector<std::int8_t> quantise_weights(const std::vector<float> &w, std::size_t in,
                                          std::size_t out, const std::vector<float> &scales) {
    if (w.size() != in * out || scales.size() != out)
        throw std::invalid_argument("quantise_weights: weights are not in x out");
    std::vector<std::int8_t> q(w.size());
    for (std::size_t k = 0; k < in; ++k)
        for (std::size_t n = 0; n < out; ++n) {
            const float r = std::nearbyint(w[k * out + n] / scales[n]);
            q[k * out + n] = static_cast<std::int8_t>(std::clamp(r, -127.0f, 127.0f));
        }
    return q;
}

float activation_scale(float max_abs) {
    if (!std::isfinite(max_abs))
        throw std::invalid_argument("activation_scale: the range is not finite");
    return max_abs > 0 ? max_abs / 127.0f : 1.0f;
}

namespace {

// The largest |x| at each of the first `layers` activations of `net`'s fp32 forward pass, over
// the calibration samples in chunks.
template <typename Net>
Calibration calibrate_layers(const Net &net, std::size_t layers, const float *raw,
                             std::size_t count) {
    if (count == 0)
        throw std::invalid_argument("calibrate: no calibration samples");
    Calibration cal{std::vector<float>(layers, 0.0f), count};
    constexpr std::size_t chunk = 256;
    for (std::size_t r = 0; r < count; r += chunk) {
        const std::size_t m = std::min(chunk, count - r);
        const auto acts = tpu_infer::fp32_activations(net, raw + r * net.inputs(), m);
        for (std::size_t i = 0; i < layers; ++i)
            for (float v : acts[i])
                cal.max_abs[i] = std::max(cal.max_abs[i], std::fabs(v));
    }
    return cal;
}

std::vector<tpu_infer::Int8Dense> quantise_dense(const std::vector<tpu_infer::FloatDense> &layers,
                                                 const float *max_abs) {
    std::vector<tpu_infer::Int8Dense> q;
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const tpu_infer::FloatDense &l = layers[i];
        tpu_infer::Int8Dense d{l.in, l.out, activation_scale(max_abs[i]), {}, {}, l.b};
        d.w_scale = channel_scales(l.w, l.in, l.out);
        d.wq = quantise_weights(l.w, l.in, l.out, d.w_scale);
        q.push_back(std::move(d));
    }
    return q;
}

} // namespace

Calibration calibrate(const tpu_infer::FloatMlp &net, const float *raw, std::size_t count) {
    return calibrate_layers(net, net.layers.size(), raw, count);
}

Calibration calibrate(const tpu_infer::FloatCnn &net, const float *raw, std::size_t count) {
    return calibrate_layers(net, net.convs.size() + net.dense.size(), raw, count);
}

tpu_infer::Int8Mlp quantise(const tpu_infer::FloatMlp &net, const Calibration &cal) {
    if (cal.max_abs.size() != net.layers.size())
        throw std::invalid_argument("quantise: the calibration is for another network");
    return {net.name, net.input, cal.samples, quantise_dense(net.layers, cal.max_abs.data())};
}

tpu_infer::Int8Cnn quantise(const tpu_infer::FloatCnn &net, const Calibration &cal) {
    if (cal.max_abs.size() != net.convs.size() + net.dense.size())
        throw std::invalid_argument("quantise: the calibration is for another network");
    tpu_infer::Int8Cnn q{net.name, net.input, net.image, cal.samples, {}, {}};
    for (std::size_t i = 0; i < net.convs.size(); ++i) {
        const tpu_infer::FloatConv &c = net.convs[i];
        const std::size_t rows = tpu_infer::cnn_kernel * tpu_infer::cnn_kernel * c.in;
        tpu_infer::Int8Conv conv{c.in, c.out, activation_scale(cal.max_abs[i]), {}, {}, c.b};
        conv.w_scale = channel_scales(c.w, rows, c.out);
        conv.wq = quantise_weights(c.w, rows, c.out, conv.w_scale);
        q.convs.push_back(std::move(conv));
    }
    q.dense = quantise_dense(net.dense, cal.max_abs.data() + net.convs.size());
    return q;
}

} // namespace tpu_quant
