// SPDX-License-Identifier: MIT
// network.hpp - a checkpointed model as inference runs it: the graph of its model spec
// (tpu_nn), its fp32 master weights (run as bf16 on the card) or its int8 post-training
// quantisation, and the input standardisation it was trained with. network_from_checkpoint()
// reads either kind of checkpoint (workloads/README.md, "Checkpoint format" and "Quantised
// checkpoint format"); quantised_checkpoint() writes the second.
#pragma once

#include <tpu_model/checkpoint.hpp>
#include <tpu_nn/graph.hpp>
#include <tpu_nn/inference.hpp>
#include <tpu_nn/params.hpp>
#include <tpu_nn/quantise.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace tpu_infer {

// x' = (x - mean) / stddev, applied to every raw feature (pixels in [0, 1]) before the first
// layer; the trainer records it in the checkpoint's notes "input.mean" and "input.stddev".
struct InputTransform {
    float mean = 0.0f;
    float stddev = 1.0f;
    float apply(float x) const { return (x - mean) / stddev; }
};
// The checkpoint's input standardisation (its notes; absent: mean 0, stddev 1). Throws
// tpu_data::DataError naming the file for a note that is not a number, or a stddev <= 0.
InputTransform input_transform(const tpu_model::Checkpoint &c, const std::string &path);
// `count` raw features standardised.
std::vector<float> standardise(const InputTransform &t, const float *raw, std::size_t count);

struct Network {
    std::string name; // the checkpoint's model spec, e.g. "cnn-28x28x1-c16-c32-d128-10"
    InputTransform input;
    tpu_nn::Graph graph;
    tpu_nn::ParamValues values;            // an fp32 checkpoint's weights
    std::optional<tpu_nn::Quantised> int8; // a quantised checkpoint's layers

    std::size_t inputs() const { return tpu_nn::elements(graph.node(0).shape); }
    std::size_t outputs() const { return graph.node(graph.output()).shape.at(0); }
    // "bf16" (an fp32 checkpoint runs as bf16) or "int8".
    const char *precision() const { return int8 ? "int8" : "bf16"; }
    tpu_nn::InferencePlan plan() const;
};

// The network of a checkpoint already read from `path`, and of the file at `path`. Throws
// tpu_data::DataError naming the file: a model name that is no model spec, a tensor missing or
// of another shape, a bad note or scale, a quantised graph int8 cannot run.
Network network_from_checkpoint(const tpu_model::Checkpoint &c, const std::string &path);
Network load_network(const std::string &path);

// fp32 network `net` quantised (tpu_nn::quantise), calibrated on `count` raw samples by its fp32
// forward pass on the CPU. Throws std::invalid_argument for a graph int8 cannot run.
tpu_nn::Quantised quantise(const Network &net, const float *raw, std::size_t count);

// The quantised checkpoint of fp32 network `net` quantised as `q`: its notes (quantisation,
// input transform, input shape of an image model, calibration samples) and int8 layers.
tpu_model::Checkpoint quantised_checkpoint(const Network &net, const tpu_nn::Quantised &q);

// Whether tpu-serve, tpu-eval and tpu-quantise run `c` through these networks: a quantised
// checkpoint, a model spec of layers the CPU model of the card's arithmetic has
// (tpu_nn::has_reference: dense layers, convolutions of any kernel, stride and padding, max
// pooling, ReLU, flatten; the MLP, the CNN, "c16k5", "conv16s2", ...) or no model spec at all
// (load_network then says what is wrong). Any other spec ("res", "ln", "gelu", "avg3", groups)
// is compiled instead (tpu_export::compile_checkpoint).
bool reads_checkpoint(const tpu_model::Checkpoint &c);

} // namespace tpu_infer
