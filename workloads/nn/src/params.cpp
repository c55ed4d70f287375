// SPDX-License-Identifier: MIT
// params.cpp - initial parameter values and their checkpoint tensors.
#include "tpu_nn/params.hpp"

#include <tpu_data/batches.hpp>
#include <tpu_data/error.hpp>

#include <cmath>

namespace tpu_nn {

namespace {

std::vector<std::uint32_t> dims(const Shape &s) {
    return {s.begin(), s.end()};
}

} // namespace

ParamValues initial_values(const Graph &g, std::uint64_t seed) {
    bool convolutions = false;
    for (const Node &n : g.nodes())
        convolutions = convolutions || n.kind == OpKind::Conv2d;
    tpu_data::SplitMix64 rng(seed), dense_rng(convolutions ? seed + 1 : seed);
    ParamValues v;
    for (const ParamInfo &p : g.params()) {
        std::vector<float> &x = v.emplace_back(elements(p.shape), 0.0f);
        if (p.init == Init::Ones)
            std::fill(x.begin(), x.end(), 1.0f);
        if (p.init == Init::He) {
            tpu_data::SplitMix64 &r = g.node(p.node).kind == OpKind::Dense ? dense_rng : rng;
            const float scale = std::sqrt(2.0f / float(p.fan_in));
            for (float &w : x)
                w = r.normal() * scale;
        }
    }
    return v;
}

void save_params(const Graph &g, const ParamValues &values, tpu_model::Checkpoint &c) {
    for (std::size_t i = 0; i < g.params().size(); ++i)
        c.tensors.push_back({g.params()[i].name, dims(g.params()[i].shape), values.at(i)});
}

ParamValues load_params(const Graph &g, const tpu_model::Checkpoint &c) {
    ParamValues v;
    for (const ParamInfo &p : g.params()) {
        const tpu_model::NamedTensor *t = c.find(p.name);
        if (t == nullptr)
            throw tpu_data::DataError("checkpoint of " + c.model, "no tensor " + p.name);
        if (t->shape != dims(p.shape))
            throw tpu_data::DataError("checkpoint of " + c.model,
                                      "tensor " + p.name + " is not of this model's shape " +
                                          to_string(p.shape));
        v.push_back(t->data);
    }
    return v;
}

} // namespace tpu_nn
