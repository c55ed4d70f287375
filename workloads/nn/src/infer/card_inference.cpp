// SPDX-License-Identifier: MIT
// card_inference.cpp - an inference plan on the card (inference.hpp): the nodes' forward
// lowerings (card_lowering.hpp) queued in order on the model's stream, a cast where a node
// reads another dtype than its input's, the int8 layers' per-channel rescale as a VECTOR
// multiply; one wait per card batch.
#include "tpu_nn/card_lowering.hpp"
#include "tpu_nn/inference.hpp"

#include <algorithm>
#include <span>
#include <stdexcept>

namespace tpu_nn {

namespace {

std::vector<std::size_t> dims(std::size_t batch, const Shape &shape) {
    std::vector<std::size_t> d{batch};
    d.insert(d.end(), shape.begin(), shape.end());
    return d;
}

template <typename T>
tpurt::Tensor upload(tpurt::Device &d, const std::vector<float> &v, const Shape &shape,
                     T (*convert)(float)) {
    std::vector<T> x(v.size());
    std::transform(v.begin(), v.end(), x.begin(), convert);
    return tpurt::Tensor::from_host<T>(d, std::span<const T>(x), {shape.begin(), shape.end()});
}

float as_float(float v) {
    return v;
}
std::int8_t as_int8(float v) {
    return static_cast<std::int8_t>(v);
}

} // namespace

CardInference::CardInference(tpurt::Device &device, InferencePlan plan, std::size_t max_batch)
    : device_(device), plan_(std::move(plan)), max_batch_(std::max<std::size_t>(max_batch, 1)),
      stream_(device) {
    const Graph &g = plan_.graph;
    for (std::size_t i = 0; i < g.params().size(); ++i) {
        const ParamInfo &p = g.params()[i];
        const bool weight = p.init == Init::He;
        if (weight && plan_.int8_layer[p.node])
            params_.push_back(upload(device, plan_.values[i], p.shape, as_int8));
        else if (weight && plan_.precision == tpurt::DType::Bf16)
            params_.push_back(upload(device, plan_.values[i], p.shape, tpurt::Bf16::from_float));
        else
            params_.push_back(upload(device, plan_.values[i], p.shape, as_float));
    }
    mult_.resize(g.nodes().size());
    for (NodeId n = 1; n < g.nodes().size(); ++n)
        if (plan_.int8_layer[n]) {
            const std::vector<float> &m = plan_.constants[*plan_.int8_layer[n]].mult;
            mult_[n] = upload(device, m, {m.size()}, as_float);
        }
    acts_.push_back(tpurt::Tensor::empty(device, plan_.act[0], dims(max_batch_, g.node(0).shape)));
    conv_.emplace_back();
    for (NodeId n = 1; n < g.nodes().size(); ++n) {
        const Node &node = g.node(n);
        const std::vector<std::size_t> shape = dims(max_batch_, node.shape);
        if (plan_.fused[n] && node.kind == OpKind::Flatten)
            acts_.push_back(acts_[node.inputs[0]].reshape(shape));
        else if (plan_.fused[n]) // a ReLU in its producer's epilogue
            acts_.push_back(acts_[node.inputs[0]]);
        else
            acts_.push_back(tpurt::Tensor::empty(device, plan_.act[n], shape));
        conv_.emplace_back();
        for (std::size_t k = 0; k < node.inputs.size(); ++k) {
            const NodeId i = node.inputs[k];
            conv_.back().push_back(
                plan_.reads[n][k] == plan_.act[i]
                    ? std::nullopt
                    : std::optional(tpurt::Tensor::empty(device, plan_.reads[n][k],
                                                         dims(max_batch_, g.node(i).shape))));
        }
    }
}

std::vector<float> CardInference::logits(const float *x, std::size_t batch) {
    std::vector<float> out(batch * plan_.classes());
    for (std::size_t r = 0; r < batch; r += max_batch_) {
        const std::size_t m = std::min(max_batch_, batch - r);
        run(x + r * plan_.inputs(), m, out.data() + r * plan_.classes());
    }
    return out;
}

void CardInference::run(const float *x, std::size_t m, float *out) {
    const Graph &g = plan_.graph;
    const std::size_t count = m * plan_.inputs();
    tpurt::Tensor input = acts_[0].slice(0, 0, m);
    if (plan_.act[0] == tpurt::DType::Int8) {
        const float inv = 1.0f / plan_.input_scale;
        std::vector<std::int8_t> q(count);
        std::transform(x, x + count, q.begin(), [&](float v) { return quantise_value(v, inv); });
        input.copy_from_host(q);
    } else if (plan_.act[0] == tpurt::DType::Bf16) {
        std::vector<tpurt::Bf16> b(count);
        std::transform(x, x + count, b.begin(), tpurt::Bf16::from_float);
        input.copy_from_host(b);
    } else {
        input.copy_from_host(x, count * sizeof(float));
    }
    for (NodeId n = 1; n <= g.output(); ++n) {
        if (plan_.fused[n])
            continue;
        const Node &node = g.node(n);
        const tpurt::Tensor y = acts_[n].slice(0, 0, m);
        std::vector<tpurt::Tensor> in;
        for (std::size_t k = 0; k < node.inputs.size(); ++k) {
            in.push_back(acts_[node.inputs[k]].slice(0, 0, m));
            if (conv_[n][k]) {
                const tpurt::Tensor converted = conv_[n][k]->slice(0, 0, m);
                tpurt::cast(stream_, in.back(), converted);
                in.back() = converted;
            }
        }
        CardCall c{stream_, node.attrs, {}, {}, y, nullptr, {}};
        for (const tpurt::Tensor &t : in)
            c.in.push_back(&t);
        for (std::size_t p : node.params)
            c.params.push_back({&*params_[p], nullptr});
        if (plan_.relu_epilogue[n])
            c.epilogue = tpurt::Activation::Relu;
        card_rule(node.kind).forward(c);
        if (mult_[n])
            tpurt::mul(stream_, y, *mult_[n], y);
    }
    stream_.synchronize();
    const tpurt::Tensor logits = acts_[g.output()].slice(0, 0, m);
    logits.copy_to_host(out, m * plan_.classes() * sizeof(float));
}

} // namespace tpu_nn
