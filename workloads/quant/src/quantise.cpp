// SPDX-License-Identifier: MIT
// quantise.cpp - per-channel weight scales, activation calibration and the int8 network.
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

Calibration calibrate(const tpu_infer::FloatMlp &net, const float *raw, std::size_t count) {
    if (count == 0)
        throw std::invalid_argument("calibrate: no calibration samples");
    Calibration cal{std::vector<float>(net.layers.size(), 0.0f), count};
    constexpr std::size_t chunk = 256;
    for (std::size_t r = 0; r < count; r += chunk) {
        const std::size_t m = std::min(chunk, count - r);
        const auto acts = tpu_infer::fp32_activations(net, raw + r * net.inputs(), m);
        for (std::size_t i = 0; i < net.layers.size(); ++i)
            for (float v : acts[i])
                cal.max_abs[i] = std::max(cal.max_abs[i], std::fabs(v));
    }
    return cal;
}

tpu_infer::Int8Mlp quantise(const tpu_infer::FloatMlp &net, const Calibration &cal) {
    if (cal.max_abs.size() != net.layers.size())
        throw std::invalid_argument("quantise: the calibration is for another network");
    tpu_infer::Int8Mlp q{net.name, net.input, cal.samples, {}};
    for (std::size_t i = 0; i < net.layers.size(); ++i) {
        const tpu_infer::FloatDense &l = net.layers[i];
        tpu_infer::Int8Dense d{l.in, l.out, activation_scale(cal.max_abs[i]), {}, {}, l.b};
        d.w_scale = channel_scales(l.w, l.in, l.out);
        d.wq = quantise_weights(l.w, l.in, l.out, d.w_scale);
        q.layers.push_back(std::move(d));
    }
    return q;
}

} // namespace tpu_quant
