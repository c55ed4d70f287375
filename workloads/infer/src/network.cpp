// SPDX-License-Identifier: MIT
// network.cpp - networks from and to checkpoints: the graph of the model spec, its fp32 or int8
// parameters (tpu_nn's checked readers), the notes of the input.
#include "tpu_infer/network.hpp"

#include <tpu_data/error.hpp>
#include <tpu_nn/cpu_executor.hpp>
#include <tpu_nn/spec.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace tpu_infer {

namespace {

float note_float(const tpu_model::Checkpoint &c, const std::string &path, const char *name,
                 float fallback) {
    auto it = c.notes.find(name);
    if (it == c.notes.end())
        return fallback;
    try {
        std::size_t used = 0;
        const float v = std::stof(it->second, &used);
        if (used == it->second.size() && std::isfinite(v))
            return v;
    } catch (const std::exception &) {
    }
    throw tpu_data::DataError(path, std::string("note ") + name + " '" + it->second +
                                        "' is not a finite number");
}

// "%.9g": a float that reads back exactly.
std::string format_float(float v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", double(v));
    return buf;
}

tpu_nn::Graph graph_of(const tpu_model::Checkpoint &c, const std::string &path) {
    tpu_nn::Graph g({1});
    try {
        g = tpu_nn::graph_from_spec(c.model);
    } catch (const std::invalid_argument &e) {
        throw tpu_data::DataError(path, "model '" + c.model + "' is not a model spec: " + e.what());
    }
    const auto shape = c.notes.find("input.shape");
    if (shape != c.notes.end() && shape->second != tpu_nn::to_string(g.node(0).shape))
        throw tpu_data::DataError(path, "note input.shape '" + shape->second + "' is not " +
                                            c.model + "'s input " +
                                            tpu_nn::to_string(g.node(0).shape));
    return g;
}

} // namespace

InputTransform input_transform(const tpu_model::Checkpoint &c, const std::string &path) {
    const InputTransform t{note_float(c, path, "input.mean", 0.0f),
                           note_float(c, path, "input.stddev", 1.0f)};
    if (!(t.stddev > 0))
        throw tpu_data::DataError(path, "note input.stddev must be positive");
    return t;
}

std::vector<float> standardise(const InputTransform &t, const float *raw, std::size_t count) {
    std::vector<float> x(count);
    std::transform(raw, raw + count, x.begin(), [&](float v) { return t.apply(v); });
    return x;
}

tpu_nn::InferencePlan Network::plan() const {
    return int8 ? tpu_nn::InferencePlan::make(graph, *int8)
                : tpu_nn::InferencePlan::make(graph, values, tpurt::DType::Bf16);
}

Network network_from_checkpoint(const tpu_model::Checkpoint &c, const std::string &path) {
    Network net{c.model, input_transform(c, path), graph_of(c, path), {}, std::nullopt};
    if (c.notes.count(tpu_nn::quantisation_note))
        net.int8 = tpu_nn::load_quantised(net.graph, c, path);
    else
        net.values = tpu_nn::load_params(net.graph, c);
    return net;
}

Network load_network(const std::string &path) {
    return network_from_checkpoint(tpu_model::load_checkpoint(path), path);
}

tpu_nn::Quantised quantise(const Network &net, const float *raw, std::size_t count) {
    tpu_nn::CpuExecutor fp32(net.graph, 0);
    fp32.values() = net.values;
    const std::vector<float> x = standardise(net.input, raw, count * net.inputs());
    return tpu_nn::quantise(net.graph, net.values, tpu_nn::calibrate(fp32, x.data(), count));
}

tpu_model::Checkpoint quantised_checkpoint(const Network &net, const tpu_nn::Quantised &q) {
    tpu_model::Checkpoint c;
    c.model = net.name;
    c.notes["input.mean"] = format_float(net.input.mean);
    c.notes["input.stddev"] = format_float(net.input.stddev);
    if (net.graph.node(0).shape.size() == 3)
        c.notes["input.shape"] = tpu_nn::to_string(net.graph.node(0).shape);
    tpu_nn::save_quantised(net.graph, q, c);
    return c;
}

bool reads_checkpoint(const tpu_model::Checkpoint &c) {
    if (c.notes.count(tpu_nn::quantisation_note))
        return true;
    try {
        return tpu_nn::has_reference(tpu_nn::graph_from_spec(c.model));
    } catch (const std::invalid_argument &) {
        return true;
    }
}

} // namespace tpu_infer
