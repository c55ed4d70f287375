// SPDX-License-Identifier: MIT
// reference.cpp - the CPU evaluation of the MLPs: fp32, and the card's bf16 and int8 layer
// arithmetic through tpurt::reference_dense plus the documented requantisation steps (the
// CNNs' blocks are cnn_reference.cpp's, their dense layers these).
#include "tpu_infer/reference.hpp"

#include "byte_views.hpp"

#include <tpurt/golden/reference_dense.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <span>
#include <variant>

namespace tpu_infer {

std::vector<float> bf16_dense_logits(const std::vector<FloatDense> &layers,
                                     std::vector<tpurt::Bf16> x, std::size_t batch) {
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const FloatDense &l = layers[i];
        const bool last = i + 1 == layers.size();
        std::vector<tpurt::Bf16> w(l.w.size());
        std::transform(l.w.begin(), l.w.end(), w.begin(), tpurt::Bf16::from_float);
        const tpurt::DenseLayer layer{.m = std::uint32_t(batch),
                                      .k = std::uint32_t(l.in),
                                      .n = std::uint32_t(l.out),
                                      .in_type = tpurt::DType::Bf16,
                                      .out_type = last ? tpurt::DType::Fp32 : tpurt::DType::Bf16,
                                      .activation =
                                          last ? tpurt::Activation::None : tpurt::Activation::Relu};
        std::vector<std::byte> out =
            tpurt::reference_dense(layer, detail::bytes(x), detail::bytes(w), l.b);
        if (last)
            return detail::from_bytes<float>(out);
        x = detail::from_bytes<tpurt::Bf16>(out);
    }
    return {};
}

std::vector<float> int8_dense_logits(const std::vector<Int8Dense> &layers,
                                     std::vector<std::int8_t> x, std::size_t batch) {
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const Int8Dense &l = layers[i];
        const bool last = i + 1 == layers.size();
        const Int8LayerConstants k = int8_constants(layers, i);
        const tpurt::DenseLayer layer{.m = std::uint32_t(batch),
                                      .k = std::uint32_t(l.in),
                                      .n = std::uint32_t(l.out),
                                      .in_type = tpurt::DType::Int8,
                                      .out_type = tpurt::DType::Fp32,
                                      .activation =
                                          last ? tpurt::Activation::None : tpurt::Activation::Relu};
        std::vector<float> u = detail::from_bytes<float>(
            tpurt::reference_dense(layer, detail::bytes(x), detail::bytes(l.wq), k.bias));
        for (std::size_t r = 0; r < batch; ++r)
            for (std::size_t n = 0; n < l.out; ++n)
                u[r * l.out + n] *= k.mult[n];
        if (last)
            return u;
        x = convert_int8(u);
    }
    return {};
}

std::vector<std::vector<float>> fp32_activations(const FloatMlp &net, const float *raw,
                                                 std::size_t batch) {
    std::vector<std::vector<float>> acts(1);
    acts[0].resize(batch * net.inputs());
    std::transform(raw, raw + acts[0].size(), acts[0].begin(),
                   [&](float v) { return net.input.apply(v); });
    for (std::size_t i = 0; i < net.layers.size(); ++i) {
        const FloatDense &l = net.layers[i];
        const std::vector<float> &x = acts.back();
        std::vector<float> y(batch * l.out);
        for (std::size_t r = 0; r < batch; ++r) {
            float *yr = y.data() + r * l.out;
            std::copy(l.b.begin(), l.b.end(), yr);
            for (std::size_t k = 0; k < l.in; ++k) {
                const float xv = x[r * l.in + k];
                const float *wk = l.w.data() + k * l.out;
                for (std::size_t n = 0; n < l.out; ++n)
                    yr[n] += xv * wk[n];
            }
            if (i + 1 < net.layers.size())
                for (std::size_t n = 0; n < l.out; ++n)
                    yr[n] = std::max(yr[n], 0.0f);
        }
        acts.push_back(std::move(y));
    }
    return acts;
}

std::vector<tpurt::Bf16> bf16_input(const InputTransform &t, const float *raw, std::size_t count) {
    std::vector<tpurt::Bf16> x(count);
    for (std::size_t i = 0; i < count; ++i)
        x[i] = tpurt::Bf16::from_float(t.apply(raw[i]));
    return x;
}

std::int8_t quantise_value(float x, float inv_scale) {
    const float r = std::nearbyint(x * inv_scale);
    if (std::isnan(r))
        return 0;
    return static_cast<std::int8_t>(std::clamp(r, -127.0f, 127.0f));
}

std::vector<std::int8_t> int8_input(const InputTransform &t, float x_scale, const float *raw,
                                    std::size_t count) {
    const float inv = 1.0f / x_scale;
    std::vector<std::int8_t> x(count);
    for (std::size_t i = 0; i < count; ++i)
        x[i] = quantise_value(t.apply(raw[i]), inv);
    return x;
}

std::int8_t convert_int8(float x) {
    if (std::isnan(x))
        return 0;
    const float r = std::nearbyint(x);
    return static_cast<std::int8_t>(std::clamp(r, -128.0f, 127.0f));
}

std::vector<std::int8_t> convert_int8(const std::vector<float> &x) {
    std::vector<std::int8_t> q(x.size());
    std::transform(x.begin(), x.end(), q.begin(), [](float v) { return convert_int8(v); });
    return q;
}

Int8LayerConstants requantisation(float x_scale, const std::vector<float> &w_scale,
                                  const std::vector<float> &b, std::optional<float> next_x_scale) {
    Int8LayerConstants k;
    k.bias.resize(b.size());
    k.mult.resize(b.size());
    for (std::size_t n = 0; n < b.size(); ++n) {
        const float s = x_scale * w_scale[n];
        k.bias[n] = b[n] / s;
        k.mult[n] = next_x_scale ? s / *next_x_scale : s;
    }
    return k;
}

Int8LayerConstants int8_constants(const std::vector<Int8Dense> &layers, std::size_t layer) {
    const Int8Dense &l = layers.at(layer);
    const bool last = layer + 1 == layers.size();
    return requantisation(l.x_scale, l.w_scale, l.b,
                          last ? std::nullopt : std::optional<float>(layers[layer + 1].x_scale));
}

std::vector<float> reference_logits(const Network &net, const float *raw, std::size_t batch) {
    if (const auto *m = std::get_if<FloatMlp>(&net))
        return bf16_dense_logits(m->layers, bf16_input(m->input, raw, batch * m->inputs()), batch);
    if (const auto *q = std::get_if<Int8Mlp>(&net))
        return int8_dense_logits(
            q->layers, int8_input(q->input, q->layers.front().x_scale, raw, batch * q->inputs()),
            batch);
    if (const auto *c = std::get_if<FloatCnn>(&net))
        return bf16_cnn_logits(*c, raw, batch);
    return int8_cnn_logits(std::get<Int8Cnn>(net), raw, batch);
}

std::vector<std::uint32_t> argmax_rows(const std::vector<float> &logits, std::size_t classes) {
    std::vector<std::uint32_t> out(logits.size() / classes);
    for (std::size_t r = 0; r < out.size(); ++r) {
        const float *row = logits.data() + r * classes;
        out[r] = std::uint32_t(std::max_element(row, row + classes) - row);
    }
    return out;
}

} // namespace tpu_infer
