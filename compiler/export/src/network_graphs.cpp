// SPDX-License-Identifier: MIT
// network_graphs.cpp - the stack's MLP and CNN as ONNX graphs (export.hpp).
#include "tpu_export/export.hpp"

#include <tpu_onnx/builder.hpp>

namespace tpu_export {

namespace {

using tpu_onnx::Dim;
using tpu_onnx::ModelBuilder;

Dim batch_dim(const ExportOptions &o) {
    return o.batch > 0 ? Dim(o.batch) : Dim(std::string("batch"));
}

ModelBuilder start(const std::string &name, const std::vector<Dim> &input_dims,
                   const tpu_infer::InputTransform &input) {
    ModelBuilder b(export_opset, "tpu-export", name);
    auto *meta = b.proto().add_metadata_props();
    meta->set_key("tpu.model");
    meta->set_value(name);
    b.proto().set_doc_string("exported by tpu-export from the checkpoint of " + name);
    b.input("input", input_dims);
    // (x - mean) / stddev, as tpu_infer::InputTransform::apply computes it.
    b.floats("input.mean", {}, {input.mean});
    b.floats("input.stddev", {}, {input.stddev});
    b.node("Sub", {"input", "input.mean"}, {"centred"}, "normalise.sub");
    b.node("Div", {"centred", "input.stddev"}, {"normalised"}, "normalise.div");
    return b;
}

// Dense layers from `x`: Gemm (weights [in, out], bias [out]) with Relu after all but the last,
// whose output is "logits". `first_w` replaces layer 0's weights when it is not empty.
void dense_layers(ModelBuilder &b, std::string x, const std::vector<tpu_infer::FloatDense> &layers,
                  const std::vector<float> &first_w) {
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const tpu_infer::FloatDense &l = layers[i];
        const std::string p = "dense" + std::to_string(i);
        b.floats(p + ".w", {std::int64_t(l.in), std::int64_t(l.out)},
                 i == 0 && !first_w.empty() ? first_w : l.w);
        b.floats(p + ".b", {std::int64_t(l.out)}, l.b);
        const bool last = i + 1 == layers.size();
        const std::string y = last ? "logits" : p + ".out";
        b.node("Gemm", {x, p + ".w", p + ".b"}, {y}, p);
        if (!last) {
            b.node("Relu", {y}, {p + ".relu"}, p + ".relu");
            x = p + ".relu";
        }
    }
}

} // namespace

onnx::ModelProto mlp_to_onnx(const tpu_infer::FloatMlp &net, const ExportOptions &options) {
    const Dim batch = batch_dim(options);
    ModelBuilder b = start(net.name, {batch, std::int64_t(net.inputs())}, net.input);
    dense_layers(b, "normalised", net.layers, {});
    b.output("logits", {batch, std::int64_t(net.outputs())});
    return b.proto();
}

onnx::ModelProto cnn_to_onnx(const tpu_infer::FloatCnn &net, const ExportOptions &options) {
    const Dim batch = batch_dim(options);
    const tpu_infer::ImageShape &image = net.image;
    ModelBuilder b = start(net.name,
                           {batch, std::int64_t(image.channels), std::int64_t(image.height),
                            std::int64_t(image.width)},
                           net.input);
    std::string x = "normalised";
    const std::int64_t k = tpu_infer::cnn_kernel, pool = tpu_infer::cnn_pool;
    for (std::size_t i = 0; i < net.convs.size(); ++i) {
        const tpu_infer::FloatConv &c = net.convs[i];
        const std::string p = "conv" + std::to_string(i);
        // HWIO [k][k][in][out] -> ONNX's OIHW [out][in][k][k].
        std::vector<float> oihw(c.w.size());
        for (std::size_t h = 0; h < std::size_t(k); ++h)
            for (std::size_t w = 0; w < std::size_t(k); ++w)
                for (std::size_t ci = 0; ci < c.in; ++ci)
                    for (std::size_t co = 0; co < c.out; ++co)
                        oihw[((co * c.in + ci) * k + h) * k + w] =
                            c.w[((h * k + w) * c.in + ci) * c.out + co];
        b.floats(p + ".w", {std::int64_t(c.out), std::int64_t(c.in), k, k}, oihw);
        b.floats(p + ".b", {std::int64_t(c.out)}, c.b);
        b.node("Conv", {x, p + ".w", p + ".b"}, {p + ".out"}, p,
               {{"kernel_shape", std::vector<std::int64_t>{k, k}},
                {"pads", std::vector<std::int64_t>{1, 1, 1, 1}},
                {"strides", std::vector<std::int64_t>{1, 1}}});
        b.node("Relu", {p + ".out"}, {p + ".relu"}, p + ".relu");
        b.node("MaxPool", {p + ".relu"}, {p + ".pool"}, p + ".pool",
               {{"kernel_shape", std::vector<std::int64_t>{pool, pool}},
                {"strides", std::vector<std::int64_t>{pool, pool}}});
        x = p + ".pool";
    }
    b.node("Flatten", {x}, {"flat"}, "flatten", {{"axis", std::int64_t(1)}});

    // The stack flattens the pooled maps in (h, w, c) order, ONNX in (c, h, w): the same rows of
    // the first dense layer, reordered.
    const tpu_infer::ImageShape last = tpu_infer::block_shapes(image, net.convs).back();
    const tpu_infer::FloatDense &first = net.dense.front();
    std::vector<float> chw(first.w.size());
    for (std::size_t h = 0; h < last.height; ++h)
        for (std::size_t w = 0; w < last.width; ++w)
            for (std::size_t c = 0; c < last.channels; ++c) {
                const std::size_t from = (h * last.width + w) * last.channels + c;
                const std::size_t to = (c * last.height + h) * last.width + w;
                std::copy_n(first.w.begin() + from * first.out, first.out,
                            chw.begin() + to * first.out);
            }
    dense_layers(b, "flat", net.dense, chw);
    b.output("logits", {batch, std::int64_t(net.outputs())});
    return b.proto();
}

} // namespace tpu_export
