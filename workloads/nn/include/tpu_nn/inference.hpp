// SPDX-License-Identifier: MIT
// inference.hpp - a graph's forward pass for inference in the card's arithmetic, planned once
// (InferencePlan) and run on the card (CardInference) or on the CPU (reference_logits, through
// tpurt's golden models: the same logits bit for bit).
//   fp32 / bf16: the card trainer's forward pass (card_trainer.hpp): in bf16 the weights rounded
//     from the fp32 masters, bf16 images and activations, fp32 biases, layer norms and logits;
//   int8: quantise.hpp's layers: int8 inputs (the graph's input quantised on the host with the
//     first layer's scale), int32 sums into fp32 with the rescaled bias, x mult per channel,
//     then ReLU / max pooling / flatten in fp32 and the card's conversion to int8 before the
//     next layer (int8_constants()).
// A ReLU that alone reads a dense layer or convolution runs in its epilogue; a flatten of a
// tensor of its own dtype is a view.
#pragma once

#include "tpu_nn/graph.hpp"
#include "tpu_nn/params.hpp"
#include "tpu_nn/quantise.hpp"

#include <tpurt/tpurt.hpp>

#include <cstddef>
#include <optional>
#include <vector>

namespace tpu_nn {

struct InferencePlan {
    Graph graph;
    tpurt::DType precision = tpurt::DType::Bf16;  // Fp32, Bf16 or Int8
    std::vector<tpurt::DType> act;                // per node: its output's dtype
    std::vector<std::vector<tpurt::DType>> reads; // per node and input: converted to this
    std::vector<bool> relu_epilogue;              // a dense layer or conv with its ReLU
    std::vector<bool> fused;                      // that ReLU, or a flatten as a view
    // Per parameter (Graph::params() order), the values the card reads: fp32, or rounded to
    // bf16 for weights in bf16; for int8 layers the quantised weights and the rescaled bias.
    ParamValues values;
    std::vector<std::optional<std::size_t>> int8_layer; // per node: its index in constants
    std::vector<Int8LayerConstants> constants;          // per int8 layer, in node order
    float input_scale = 1.0f; // int8: the first layer's, with which the host quantises the input

    // The fp32 or bf16 plan of `values`; throws std::invalid_argument naming a node the card
    // cannot run.
    static InferencePlan make(const Graph &g, const ParamValues &values, tpurt::DType precision);
    // The int8 plan of `q` (int8_constants()'s checks).
    static InferencePlan make(const Graph &g, const Quantised &q);

    std::size_t inputs() const { return elements(graph.node(0).shape); }
    std::size_t classes() const { return graph.node(graph.output()).shape.at(0); }
};

// A plan on one card: weights uploaded once, activations for max_batch rows, a stream; logits()
// runs a request of any size as card batches of at most max_batch rows. Used by one thread at a
// time. Throws tpurt::Error if the card refuses the tensors.
class CardInference {
  public:
    CardInference(tpurt::Device &device, InferencePlan plan, std::size_t max_batch);
    // The logits (batch x classes) of `batch` samples (batch x inputs, standardised features).
    std::vector<float> logits(const float *x, std::size_t batch);
    const InferencePlan &plan() const { return plan_; }
    std::size_t max_batch() const { return max_batch_; }

  private:
    void run(const float *x, std::size_t m, float *out);

    tpurt::Device &device_;
    InferencePlan plan_;
    std::size_t max_batch_;
    tpurt::Stream stream_;
    std::vector<tpurt::Tensor> acts_;                             // per node, max_batch rows
    std::vector<std::vector<std::optional<tpurt::Tensor>>> conv_; // per node and input
    std::vector<std::optional<tpurt::Tensor>> params_;            // per parameter
    std::vector<std::optional<tpurt::Tensor>> mult_;              // per node (int8 layers)
};

// The same logits on the CPU: each node by tpurt's golden model of the card's op (dense,
// convolution, max pooling, ReLU, flatten, the conversions). Throws std::invalid_argument for
// a node with no exact model (layer norm, average pooling, sigmoid, tanh, GELU, add).
std::vector<float> reference_logits(const InferencePlan &plan, const float *x, std::size_t batch);
// Whether reference_logits has a model of every node of `g` (and the card runs them: a
// convolution of one group).
bool has_reference(const Graph &g);

} // namespace tpu_nn
