// SPDX-License-Identifier: MIT
// network.cpp - FloatMlp and Int8Mlp from and to checkpoints, with every tensor's presence and
// shape checked so that a bad file is refused with its name and the reason.
#include "tpu_infer/network.hpp"

#include "tpu_data/error.hpp"

#include <cmath>
#include <cstdio>
#include <string>

namespace tpu_infer {
namespace {

std::string key(std::size_t i, const char *suffix) {
    return "layer" + std::to_string(i) + suffix;
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

InputTransform input_transform(const tpu_model::Checkpoint &c, const std::string &path) {
    InputTransform t{note_float(c, path, "input.mean", 0.0f),
                     note_float(c, path, "input.stddev", 1.0f)};
    if (!(t.stddev > 0))
        throw tpu_data::DataError(path, "note input.stddev must be positive");
    return t;
}

// The layer sizes of "layer<i>.w" tensors 0, 1, ... (consecutive, each in x out, chained).
std::vector<std::pair<std::size_t, std::size_t>>
layer_sizes(const tpu_model::Checkpoint &c, const std::string &path, const char *weight_suffix) {
    std::vector<std::pair<std::size_t, std::size_t>> sizes;
    for (std::size_t i = 0;; ++i) {
        const tpu_model::NamedTensor *w = c.find(key(i, weight_suffix));
        if (!w)
            break;
        if (w->shape.size() != 2 || w->shape[0] == 0 || w->shape[1] == 0)
            throw tpu_data::DataError(path, "tensor " + key(i, weight_suffix) +
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

std::string format_float(float v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", double(v));
    return buf;
}

} // namespace

FloatMlp float_mlp_from_checkpoint(const tpu_model::Checkpoint &c, const std::string &path) {
    if (c.notes.count(quantisation_note))
        throw tpu_data::DataError(path, "is a quantised checkpoint, not an fp32 one");
    FloatMlp net{c.model, input_transform(c, path), {}};
    const auto sizes = layer_sizes(c, path, ".w");
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        const auto [in, out] = sizes[i];
        FloatDense l{in, out, {}, {}};
        l.w = tensor(c, path, key(i, ".w"), {std::uint32_t(in), std::uint32_t(out)}).data;
        l.b = tensor(c, path, key(i, ".b"), {std::uint32_t(out)}).data;
        net.layers.push_back(std::move(l));
    }
    return net;
}

Int8Mlp int8_mlp_from_checkpoint(const tpu_model::Checkpoint &c, const std::string &path) {
    auto q = c.notes.find(quantisation_note);
    if (q == c.notes.end() || q->second != quantisation_int8_v1)
        throw tpu_data::DataError(path, std::string("is not a quantised checkpoint (note ") +
                                            quantisation_note + " = " + quantisation_int8_v1 + ")");
    Int8Mlp net{c.model, input_transform(c, path), 0, {}};
    if (auto it = c.notes.find("calibration.samples"); it != c.notes.end())
        net.calibration_samples = std::strtoull(it->second.c_str(), nullptr, 10);
    const auto sizes = layer_sizes(c, path, ".wq");
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        const auto [in, out] = sizes[i];
        Int8Dense l{in, out, 1.0f, {}, {}, {}};
        const auto &wq = tensor(c, path, key(i, ".wq"), {std::uint32_t(in), std::uint32_t(out)});
        l.wq.reserve(wq.data.size());
        for (float v : wq.data) {
            if (!(v >= -127 && v <= 127) || v != std::nearbyint(v))
                throw tpu_data::DataError(path, "tensor " + key(i, ".wq") + " holds " +
                                                    format_float(v) +
                                                    ", not an integer in -127..127");
            l.wq.push_back(static_cast<std::int8_t>(v));
        }
        l.w_scale = tensor(c, path, key(i, ".wscale"), {std::uint32_t(out)}).data;
        l.b = tensor(c, path, key(i, ".b"), {std::uint32_t(out)}).data;
        l.x_scale = tensor(c, path, key(i, ".xscale"), {1}).data[0];
        for (float s : l.w_scale)
            if (!(s > 0) || !std::isfinite(s))
                throw tpu_data::DataError(path, "tensor " + key(i, ".wscale") +
                                                    " holds a scale that is not positive");
        if (!(l.x_scale > 0) || !std::isfinite(l.x_scale))
            throw tpu_data::DataError(path, "tensor " + key(i, ".xscale") + " is not positive");
        net.layers.push_back(std::move(l));
    }
    return net;
}

Network load_network(const std::string &path) {
    tpu_model::Checkpoint c = tpu_model::load_checkpoint(path);
    if (c.notes.count(quantisation_note))
        return int8_mlp_from_checkpoint(c, path);
    return float_mlp_from_checkpoint(c, path);
}

tpu_model::Checkpoint int8_mlp_to_checkpoint(const Int8Mlp &net) {
    tpu_model::Checkpoint c;
    c.model = net.name;
    c.notes[quantisation_note] = quantisation_int8_v1;
    c.notes["input.mean"] = format_float(net.input.mean);
    c.notes["input.stddev"] = format_float(net.input.stddev);
    c.notes["calibration.samples"] = std::to_string(net.calibration_samples);
    for (std::size_t i = 0; i < net.layers.size(); ++i) {
        const Int8Dense &l = net.layers[i];
        const auto in = std::uint32_t(l.in), out = std::uint32_t(l.out);
        c.tensors.push_back({key(i, ".wq"), {in, out}, {l.wq.begin(), l.wq.end()}});
        c.tensors.push_back({key(i, ".wscale"), {out}, l.w_scale});
        c.tensors.push_back({key(i, ".b"), {out}, l.b});
        c.tensors.push_back({key(i, ".xscale"), {1}, {l.x_scale}});
    }
    return c;
}

std::string network_name(const Network &n) {
    return std::visit([](const auto &net) { return net.name; }, n);
}
std::size_t network_inputs(const Network &n) {
    return std::visit([](const auto &net) { return net.inputs(); }, n);
}
std::size_t network_outputs(const Network &n) {
    return std::visit([](const auto &net) { return net.outputs(); }, n);
}
const char *network_precision(const Network &n) {
    return std::holds_alternative<Int8Mlp>(n) ? "int8" : "bf16";
}

} // namespace tpu_infer
