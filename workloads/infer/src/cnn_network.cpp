// SPDX-License-Identifier: MIT
// cnn_network.cpp - FloatCnn and Int8Cnn from and to checkpoints: the input shape note, the
// convolution tensors chained channel to channel, and the dense layers taking the flattened
// output of the last block, each checked with checkpoint_fields.hpp.
#include "tpu_infer/network.hpp"

#include "checkpoint_fields.hpp"
#include "tpu_data/error.hpp"

#include <cstdio>
#include <string>

namespace tpu_infer {
namespace {

ImageShape image_shape(const tpu_model::Checkpoint &c, const std::string &path) {
    auto it = c.notes.find("input.shape");
    if (it == c.notes.end())
        throw tpu_data::DataError(path, "has convolutions but no note input.shape (HxWxC)");
    ImageShape s;
    char tail = 0;
    if (std::sscanf(it->second.c_str(), "%zux%zux%zu%c", &s.height, &s.width, &s.channels, &tail) !=
            3 ||
        s.size() == 0)
        throw tpu_data::DataError(path, "note input.shape '" + it->second +
                                            "' is not HxWxC with positive sizes");
    return s;
}

// The output channels of "conv<i><suffix>" tensors 0, 1, ..., each [3, 3, in, out] with in the
// previous block's out (the image's channels for the first).
std::vector<std::size_t> conv_filters(const tpu_model::Checkpoint &c, const std::string &path,
                                      const ImageShape &image, const char *suffix) {
    std::vector<std::size_t> filters;
    std::size_t in = image.channels;
    for (std::size_t i = 0;; ++i) {
        const std::string name = detail::key("conv", i, suffix);
        const tpu_model::NamedTensor *w = c.find(name);
        if (!w)
            break;
        if (w->shape.size() != 4 || w->shape[0] != cnn_kernel || w->shape[1] != cnn_kernel ||
            w->shape[2] != in || w->shape[3] == 0)
            throw tpu_data::DataError(path, "tensor " + name + " must be 3x3x" +
                                                std::to_string(in) + "xF (HWIO)");
        in = w->shape[3];
        filters.push_back(in);
    }
    return filters;
}

// Checks that the dense layers take the flattened output of the last block.
void check_flatten(const std::string &path, const ImageShape &image,
                   const std::vector<std::size_t> &filters, std::size_t dense_in) {
    const ImageShape last = block_shapes(image, filters).back();
    if (last.size() == 0)
        throw tpu_data::DataError(path, "the image is pooled away before the dense layers");
    if (dense_in != last.size())
        throw tpu_data::DataError(
            path, "layer0 takes " + std::to_string(dense_in) + " inputs, the convolutions give " +
                      std::to_string(last.height) + "x" + std::to_string(last.width) + "x" +
                      std::to_string(last.channels));
}

std::vector<std::uint32_t> conv_shape(std::size_t in, std::size_t out) {
    return {std::uint32_t(cnn_kernel), std::uint32_t(cnn_kernel), std::uint32_t(in),
            std::uint32_t(out)};
}

} // namespace

std::vector<ImageShape> block_shapes(const ImageShape &input,
                                     const std::vector<std::size_t> &filters) {
    std::vector<ImageShape> shapes{input};
    for (std::size_t f : filters) {
        const ImageShape &s = shapes.back();
        shapes.push_back({s.height / cnn_pool, s.width / cnn_pool, f});
    }
    return shapes;
}

bool is_cnn_checkpoint(const tpu_model::Checkpoint &c) {
    return c.find("conv0.w") || c.find("conv0.wq");
}

FloatCnn float_cnn_from_checkpoint(const tpu_model::Checkpoint &c, const std::string &path) {
    detail::require_fp32(c, path);
    FloatCnn net{c.model, input_transform(c, path), image_shape(c, path), {}, {}};
    const std::vector<std::size_t> filters = conv_filters(c, path, net.image, ".w");
    if (filters.empty())
        throw tpu_data::DataError(path, "has no convolutions (no tensor conv0.w)");
    std::size_t in = net.image.channels;
    for (std::size_t i = 0; i < filters.size(); ++i) {
        FloatConv conv{in, filters[i], {}, {}};
        conv.w =
            detail::tensor(c, path, detail::key("conv", i, ".w"), conv_shape(in, filters[i])).data;
        conv.b =
            detail::tensor(c, path, detail::key("conv", i, ".b"), {std::uint32_t(filters[i])}).data;
        net.convs.push_back(std::move(conv));
        in = filters[i];
    }
    net.dense = detail::float_dense_layers(c, path);
    check_flatten(path, net.image, filters, net.dense.front().in);
    return net;
}

Int8Cnn int8_cnn_from_checkpoint(const tpu_model::Checkpoint &c, const std::string &path) {
    detail::require_int8(c, path);
    Int8Cnn net{
        c.model, input_transform(c, path), image_shape(c, path), detail::calibration_samples(c), {},
        {}};
    const std::vector<std::size_t> filters = conv_filters(c, path, net.image, ".wq");
    if (filters.empty())
        throw tpu_data::DataError(path, "has no convolutions (no tensor conv0.wq)");
    std::size_t in = net.image.channels;
    for (std::size_t i = 0; i < filters.size(); ++i) {
        const auto out = std::uint32_t(filters[i]);
        Int8Conv conv{in, filters[i], 1.0f, {}, {}, {}};
        conv.wq = detail::int8_values(
            detail::tensor(c, path, detail::key("conv", i, ".wq"), conv_shape(in, out)), path);
        conv.w_scale = detail::tensor(c, path, detail::key("conv", i, ".wscale"), {out}).data;
        conv.b = detail::tensor(c, path, detail::key("conv", i, ".b"), {out}).data;
        conv.x_scale = detail::tensor(c, path, detail::key("conv", i, ".xscale"), {1}).data[0];
        detail::check_scales(conv.w_scale, path, detail::key("conv", i, ".wscale"));
        detail::check_scales({conv.x_scale}, path, detail::key("conv", i, ".xscale"));
        net.convs.push_back(std::move(conv));
        in = out;
    }
    net.dense = detail::int8_dense_layers(c, path);
    check_flatten(path, net.image, filters, net.dense.front().in);
    return net;
}

tpu_model::Checkpoint int8_cnn_to_checkpoint(const Int8Cnn &net) {
    tpu_model::Checkpoint c;
    c.model = net.name;
    detail::add_int8_notes(c, net.input, net.calibration_samples);
    c.notes["input.shape"] = std::to_string(net.image.height) + "x" +
                             std::to_string(net.image.width) + "x" +
                             std::to_string(net.image.channels);
    for (std::size_t i = 0; i < net.convs.size(); ++i) {
        const Int8Conv &l = net.convs[i];
        const auto out = std::uint32_t(l.out);
        c.tensors.push_back(
            {detail::key("conv", i, ".wq"), conv_shape(l.in, l.out), {l.wq.begin(), l.wq.end()}});
        c.tensors.push_back({detail::key("conv", i, ".wscale"), {out}, l.w_scale});
        c.tensors.push_back({detail::key("conv", i, ".b"), {out}, l.b});
        c.tensors.push_back({detail::key("conv", i, ".xscale"), {1}, {l.x_scale}});
    }
    detail::add_int8_dense_layers(c, net.dense);
    return c;
}

} // namespace tpu_infer
