// SPDX-License-Identifier: MIT
// inference_reference.cpp - an inference plan run on the CPU in the card's arithmetic
// (inference.hpp's reference_logits): dense layers and convolutions by tpurt's golden models
// (reference_dense, reference_conv2d_layer), the int8 rescale as the VECTOR multiply's one fp32
// product, ReLU and the conversions by ACTIVATE's documented steps (reference_epilogue), max
// pooling as the card's POOL MAX (the first maximum in window order, NaN if the window holds
// one), flatten as the same bytes.
#include "tpu_nn/inference.hpp"

#include <tpurt/golden/reference_conv2d.hpp>
#include <tpurt/golden/reference_dense.hpp>

#include <cmath>
#include <cstring>
#include <stdexcept>

namespace tpu_nn {

namespace {

// A node's output: raw bytes of its dtype, batch first.
struct Values {
    tpurt::DType type = tpurt::DType::Fp32;
    std::vector<std::byte> bytes;
};

std::vector<float> floats(const Values &v) {
    std::vector<float> f;
    if (v.type == tpurt::DType::Fp32) {
        f.resize(v.bytes.size() / sizeof(float));
        std::memcpy(f.data(), v.bytes.data(), v.bytes.size());
    } else if (v.type == tpurt::DType::Bf16) {
        f.resize(v.bytes.size() / sizeof(tpurt::Bf16));
        for (std::size_t i = 0; i < f.size(); ++i) {
            tpurt::Bf16 b;
            std::memcpy(&b, v.bytes.data() + i * sizeof b, sizeof b);
            f[i] = b.to_float();
        }
    } else {
        for (std::byte b : v.bytes)
            f.push_back(float(static_cast<std::int8_t>(b)));
    }
    return f;
}

// ACTIVATE's steps on rows of `n` fp32 values into `type`.
Values activate(const std::vector<float> &x, std::size_t n, tpurt::Activation f,
                tpurt::DType type) {
    return {type, tpurt::reference_epilogue(x, n, {}, f, 1.0f, type)};
}

Values max_pool(const Values &x, std::size_t batch, const Shape &in, const Window &k) {
    const std::vector<float> v = floats(x);
    const std::size_t h = in[0], w = in[1], c = in[2], oh = k.out_h(h), ow = k.out_w(w);
    std::vector<float> y(batch * oh * ow * c);
    for (std::size_t b = 0; b < batch; ++b)
        for (std::size_t oy = 0; oy < oh; ++oy)
            for (std::size_t ox = 0; ox < ow; ++ox)
                for (std::size_t ch = 0; ch < c; ++ch) {
                    float best = 0;
                    bool first = true;
                    for (std::size_t ky = 0; ky < k.kh; ++ky)
                        for (std::size_t kx = 0; kx < k.kw; ++kx) {
                            const std::size_t iy = oy * k.sh + ky, ix = ox * k.sw + kx;
                            if (iy < k.ph || ix < k.pw || iy - k.ph >= h || ix - k.pw >= w)
                                continue; // padding: -inf, never picked
                            const float e = v[((b * h + iy - k.ph) * w + ix - k.pw) * c + ch];
                            if (first || std::isnan(e) || (!std::isnan(best) && e > best))
                                best = e;
                            first = false;
                        }
                    y[((b * oh + oy) * ow + ox) * c + ch] = best;
                }
    return activate(y, c, tpurt::Activation::None, x.type);
}

} // namespace

bool has_reference(const Graph &g) {
    for (NodeId n = 1; n <= g.output(); ++n) {
        const Node &node = g.node(n);
        const bool modelled = node.kind == OpKind::Dense || node.kind == OpKind::Flatten ||
                              (node.kind == OpKind::Conv2d && node.attrs.groups == 1) ||
                              (node.kind == OpKind::Pool && node.attrs.pool == PoolKind::Max) ||
                              (node.kind == OpKind::Activation && node.attrs.act == Act::Relu);
        if (!modelled)
            return false;
    }
    return true;
}

std::vector<float> reference_logits(const InferencePlan &plan, const float *x, std::size_t batch) {
    const Graph &g = plan.graph;
    std::vector<Values> acts(g.nodes().size());
    const std::vector<float> input(x, x + batch * plan.inputs());
    if (plan.act[0] == tpurt::DType::Int8) {
        const float inv = 1.0f / plan.input_scale;
        for (float v : input)
            acts[0].bytes.push_back(std::byte(static_cast<std::uint8_t>(quantise_value(v, inv))));
        acts[0].type = tpurt::DType::Int8;
    } else {
        acts[0] = activate(input, 1, tpurt::Activation::None, plan.act[0]);
    }
    for (NodeId n = 1; n <= g.output(); ++n) {
        const Node &node = g.node(n);
        const NodeId i = node.inputs[0];
        const Shape &in = g.node(i).shape;
        Values a = acts[i];
        if (plan.reads[n][0] != a.type)
            a = activate(floats(a), 1, tpurt::Activation::None, plan.reads[n][0]);
        // A fused ReLU's producer applied it.
        const tpurt::Activation epilogue =
            plan.relu_epilogue[n] ? tpurt::Activation::Relu : tpurt::Activation::None;
        const tpurt::DType out = plan.act[n];
        std::vector<std::byte> w;
        std::vector<float> bias;
        if (!node.params.empty()) {
            w = activate(plan.values[node.params[0]], 1, tpurt::Activation::None, a.type).bytes;
            bias = plan.values[node.params[1]];
        }
        if (plan.fused[n] || node.kind == OpKind::Flatten) {
            acts[n] = {out, a.bytes};
        } else if (node.kind == OpKind::Dense) {
            const tpurt::DenseLayer layer{std::uint32_t(batch),
                                          std::uint32_t(elements(in)),
                                          std::uint32_t(node.attrs.units),
                                          a.type,
                                          out,
                                          epilogue};
            acts[n] = {out, tpurt::reference_dense(layer, a.bytes, w, bias)};
        } else if (node.kind == OpKind::Conv2d) {
            const Window &k = node.attrs.window;
            const tpurt::Conv2dShape shape{std::uint32_t(batch),
                                           std::uint32_t(in[0]),
                                           std::uint32_t(in[1]),
                                           std::uint32_t(in[2]),
                                           std::uint32_t(k.kh),
                                           std::uint32_t(k.kw),
                                           std::uint32_t(node.attrs.units),
                                           std::uint32_t(k.sh),
                                           std::uint32_t(k.sw),
                                           std::uint32_t(k.ph),
                                           std::uint32_t(k.pw)};
            acts[n] = {out, tpurt::reference_conv2d_layer(a.type, a.bytes, w, bias,
                                                          {.function = epilogue, .out_type = out},
                                                          shape)};
        } else if (node.kind == OpKind::Pool && node.attrs.pool == PoolKind::Max) {
            acts[n] = max_pool(a, batch, in, node.attrs.window);
        } else if (node.kind == OpKind::Activation && node.attrs.act == Act::Relu) {
            acts[n] = activate(floats(a), 1, tpurt::Activation::Relu, out);
        } else {
            throw std::invalid_argument(std::string("reference_logits: no exact CPU model of the "
                                                    "card's ") +
                                        op_rule(node.kind).name + " " + node.name);
        }
        if (plan.int8_layer[n]) { // the VECTOR multiply by the per-channel factors
            const std::vector<float> &mult = plan.constants[*plan.int8_layer[n]].mult;
            std::vector<float> u = floats(acts[n]);
            for (std::size_t e = 0; e < u.size(); ++e)
                u[e] *= mult[e % mult.size()];
            std::memcpy(acts[n].bytes.data(), u.data(), acts[n].bytes.size());
        }
    }
    return floats(acts[g.output()]);
}

} // namespace tpu_nn
