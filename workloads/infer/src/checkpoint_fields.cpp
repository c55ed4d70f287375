// SPDX-License-Identifier: MIT
// checkpoint_fields.cpp - checked reads of a network's tensors and notes (checkpoint_fields.hpp).
#include "checkpoint_fields.hpp"

#include "tpu_data/error.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tpu_infer::detail {

std::string key(const char *prefix, std::size_t i, const char *suffix) {
    return prefix + std::to_string(i) + suffix;
}

const tpu_model::NamedTensor &tensor(const tpu_model::Checkpoint &c, const std::string &path,
                                     const std::string &name,
                                     const std::vector<std::uint32_t> &shape) {
    const tpu_model::NamedTensor *t = c.find(name);
    if (!t)
        throw tpu_data::DataError(path, "has no tensor " + name);
    if (t->shape != shape) {
        std::string want, got;
        for (std::uint32_t s : shape)
            want += (want.empty() ? "" : "x") + std::to_string(s);
        for (std::uint32_t s : t->shape)
            got += (got.empty() ? "" : "x") + std::to_string(s);
        throw tpu_data::DataError(path, "tensor " + name + " is " + got + ", expected " + want);
    }
    return *t;
}

std::vector<std::int8_t> int8_values(const tpu_model::NamedTensor &t, const std::string &path) {
    std::vector<std::int8_t> q;
    q.reserve(t.data.size());
    for (float v : t.data) {
        if (!(v >= -127 && v <= 127) || v != std::nearbyint(v))
            throw tpu_data::DataError(path, "tensor " + t.name + " holds " + format_float(v) +
                                                ", not an integer in -127..127");
        q.push_back(static_cast<std::int8_t>(v));
    }
    return q;
}

void check_scales(const std::vector<float> &scales, const std::string &path,
                  const std::string &name) {
    for (float s : scales)
        if (!(s > 0) || !std::isfinite(s))
            throw tpu_data::DataError(path,
                                      "tensor " + name + " holds a scale that is not positive");
}

float note_float(const tpu_model::Checkpoint &c, const std::string &path, const char *name,
                 float fallback) {
    auto it = c.notes.find(name);
    if (it == c.notes.end())
        return fallback;
    try {
        std::size_t used = 0;
        float v = std::stof(it->second, &used);
        if (used == it->second.size() && std::isfinite(v))
            return v;
    } catch (const std::exception &) {
    }
    throw tpu_data::DataError(path, std::string("note ") + name + " '" + it->second +
                                        "' is not a finite number");
}

std::vector<std::pair<std::size_t, std::size_t>>
layer_sizes(const tpu_model::Checkpoint &c, const std::string &path, const char *weight_suffix) {
    std::vector<std::pair<std::size_t, std::size_t>> sizes;
    for (std::size_t i = 0;; ++i) {
        const tpu_model::NamedTensor *w = c.find(key("layer", i, weight_suffix));
        if (!w)
            break;
        if (w->shape.size() != 2 || w->shape[0] == 0 || w->shape[1] == 0)
            throw tpu_data::DataError(path, "tensor " + key("layer", i, weight_suffix) +
                                                " is not a non-empty matrix");
        if (!sizes.empty() && sizes.back().second != w->shape[0])
            throw tpu_data::DataError(
                path, "layer " + std::to_string(i) + " takes " + std::to_string(w->shape[0]) +
                          " inputs, the layer before gives " + std::to_string(sizes.back().second));
        sizes.emplace_back(w->shape[0], w->shape[1]);
    }
    if (sizes.empty())
        throw tpu_data::DataError(path, std::string("has no dense layers (no tensor layer0") +
                                            weight_suffix + ")");
    return sizes;
}

std::vector<FloatDense> float_dense_layers(const tpu_model::Checkpoint &c,
                                           const std::string &path) {
    std::vector<FloatDense> layers;
    const auto sizes = layer_sizes(c, path, ".w");
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        const auto [in, out] = sizes[i];
        FloatDense l{in, out, {}, {}};
        l.w = tensor(c, path, key("layer", i, ".w"), {std::uint32_t(in), std::uint32_t(out)}).data;
        l.b = tensor(c, path, key("layer", i, ".b"), {std::uint32_t(out)}).data;
        layers.push_back(std::move(l));
    }
    return layers;
}

std::vector<Int8Dense> int8_dense_layers(const tpu_model::Checkpoint &c, const std::string &path) {
    std::vector<Int8Dense> layers;
    const auto sizes = layer_sizes(c, path, ".wq");
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        const auto [in, out] = sizes[i];
        Int8Dense l{in, out, 1.0f, {}, {}, {}};
        l.wq = int8_values(
            tensor(c, path, key("layer", i, ".wq"), {std::uint32_t(in), std::uint32_t(out)}), path);
        l.w_scale = tensor(c, path, key("layer", i, ".wscale"), {std::uint32_t(out)}).data;
        l.b = tensor(c, path, key("layer", i, ".b"), {std::uint32_t(out)}).data;
        l.x_scale = tensor(c, path, key("layer", i, ".xscale"), {1}).data[0];
        check_scales(l.w_scale, path, key("layer", i, ".wscale"));
        check_scales({l.x_scale}, path, key("layer", i, ".xscale"));
        layers.push_back(std::move(l));
    }
    return layers;
}

void add_int8_dense_layers(tpu_model::Checkpoint &c, const std::vector<Int8Dense> &layers) {
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const Int8Dense &l = layers[i];
        const auto in = std::uint32_t(l.in), out = std::uint32_t(l.out);
        c.tensors.push_back({key("layer", i, ".wq"), {in, out}, {l.wq.begin(), l.wq.end()}});
        c.tensors.push_back({key("layer", i, ".wscale"), {out}, l.w_scale});
        c.tensors.push_back({key("layer", i, ".b"), {out}, l.b});
        c.tensors.push_back({key("layer", i, ".xscale"), {1}, {l.x_scale}});
    }
}

void add_int8_notes(tpu_model::Checkpoint &c, const InputTransform &input,
                    std::uint64_t calibration_samples) {
    c.notes[quantisation_note] = quantisation_int8_v1;
    c.notes["input.mean"] = format_float(input.mean);
    c.notes["input.stddev"] = format_float(input.stddev);
    c.notes["calibration.samples"] = std::to_string(calibration_samples);
}

std::uint64_t calibration_samples(const tpu_model::Checkpoint &c) {
    auto it = c.notes.find("calibration.samples");
    return it == c.notes.end() ? 0 : std::strtoull(it->second.c_str(), nullptr, 10);
}

void require_int8(const tpu_model::Checkpoint &c, const std::string &path) {
    auto q = c.notes.find(quantisation_note);
    if (q == c.notes.end() || q->second != quantisation_int8_v1)
        throw tpu_data::DataError(path, std::string("is not a quantised checkpoint (note ") +
                                            quantisation_note + " = " + quantisation_int8_v1 + ")");
}

void require_fp32(const tpu_model::Checkpoint &c, const std::string &path) {
    if (c.notes.count(quantisation_note))
        throw tpu_data::DataError(path, "is a quantised checkpoint, not an fp32 one");
}

std::string format_float(float v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", double(v));
    return buf;
}

} // namespace tpu_infer::detail

namespace tpu_infer {

InputTransform input_transform(const tpu_model::Checkpoint &c, const std::string &path) {
    InputTransform t{detail::note_float(c, path, "input.mean", 0.0f),
                     detail::note_float(c, path, "input.stddev", 1.0f)};
    if (!(t.stddev > 0))
        throw tpu_data::DataError(path, "note input.stddev must be positive");
    return t;
}

} // namespace tpu_infer
