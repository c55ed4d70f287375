// SPDX-License-Identifier: MIT
// network.cpp - FloatMlp and Int8Mlp from and to checkpoints (every tensor's presence and shape
// checked by checkpoint_fields.hpp), load_network() for every kind, and what the kinds share.
#include "tpu_infer/network.hpp"

#include "checkpoint_fields.hpp"

#include <tpu_nn/spec.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace tpu_infer {

FloatMlp float_mlp_from_checkpoint(const tpu_model::Checkpoint &c, const std::string &path) {
    detail::require_fp32(c, path);
    return FloatMlp{c.model, input_transform(c, path), detail::float_dense_layers(c, path)};
}

Int8Mlp int8_mlp_from_checkpoint(const tpu_model::Checkpoint &c, const std::string &path) {
    detail::require_int8(c, path);
    return Int8Mlp{c.model, input_transform(c, path), detail::calibration_samples(c),
                   detail::int8_dense_layers(c, path)};
}

namespace {

// A CNN block as FloatCnn has them: 3x3, stride 1, padding 1, one group.
bool cnn_block(const tpu_nn::Layer &l) {
    const tpu_nn::Window &k = l.window;
    return l.kind == tpu_nn::LayerKind::Block && l.groups == 1 && k.kh == 3 && k.kw == 3 &&
           k.sh == 1 && k.sw == 1 && k.ph == 1 && k.pw == 1;
}

bool dense(const tpu_nn::Layer &l) {
    return l.kind == tpu_nn::LayerKind::Dense;
}

} // namespace

bool reads_checkpoint(const tpu_model::Checkpoint &c) {
    if (c.notes.count(quantisation_note))
        return true;
    tpu_nn::Spec spec;
    try {
        spec = tpu_nn::parse_spec(c.model);
    } catch (const std::invalid_argument &) {
        return true;
    }
    const auto first_dense = std::find_if(spec.layers.begin(), spec.layers.end(), dense);
    return std::all_of(spec.layers.begin(), first_dense, cnn_block) &&
           std::all_of(first_dense, spec.layers.end(), dense);
}

Network load_network(const std::string &path) {
    return network_from_checkpoint(tpu_model::load_checkpoint(path), path);
}

Network network_from_checkpoint(const tpu_model::Checkpoint &c, const std::string &path) {
    const bool int8 = c.notes.count(quantisation_note) > 0;
    if (is_cnn_checkpoint(c))
        return int8 ? Network{int8_cnn_from_checkpoint(c, path)}
                    : Network{float_cnn_from_checkpoint(c, path)};
    return int8 ? Network{int8_mlp_from_checkpoint(c, path)}
                : Network{float_mlp_from_checkpoint(c, path)};
}

tpu_model::Checkpoint int8_mlp_to_checkpoint(const Int8Mlp &net) {
    tpu_model::Checkpoint c;
    c.model = net.name;
    detail::add_int8_notes(c, net.input, net.calibration_samples);
    detail::add_int8_dense_layers(c, net.layers);
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
    return std::holds_alternative<Int8Mlp>(n) || std::holds_alternative<Int8Cnn>(n) ? "int8"
                                                                                    : "bf16";
}

} // namespace tpu_infer
