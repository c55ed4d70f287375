// SPDX-License-Identifier: MIT
// spec.hpp - a model written as one string, the name its checkpoints carry: parsed into a Spec,
// printed back in canonical form (print_spec(parse_spec(s)) == s for a canonical s), and built
// into a Graph. Today's names keep their meaning: "mlp-784-256-128-10" (dense layers, ReLU
// between) and "cnn-28x28x1-c16-c32-d128-10" (3x3 conv blocks with ReLU and 2x2 max pooling,
// dense layers after the flatten). The grammar (tokens joined by '-'; workloads/README.md):
//
//   spec   := "mlp-" N ("-" N)* "-" N  |  "cnn-" H "x" W "x" C ("-" layer)* "-" N
//   layer  := "c" F opts      conv block: convolution (opts) + bias, relu, max pooling 2x2/2
//           | "conv" F opts   convolution + bias alone
//           | "res" [opts]    residual block, channels kept: relu(x + ln(conv(relu(ln(conv(x))))))
//           | "max" W ["s" S] ["p" P] | "avg" W ["s" S] ["p" P]    pooling (stride W, padding 0)
//           | "relu" | "sigmoid" | "tanh" | "gelu"                   activation
//           | "ln"            layer norm over the last dimension (channels), learned scale, shift
//           | "flat"          flatten (h, w, c order)
//           | "d" N | N       dense N + bias + relu (a spatial input is flattened first)
//           | "d"             nothing: marks where the dense part starts ("cnn-...-c32-d-10")
//   opts   := ["k" K] ["s" S] ["p" P] ["g" G]   kernel KxK (3), stride (1), padding ((K-1)/2),
//                                              groups (1); res takes k only
//   the last N: the classes, a dense layer without activation (the logits).
//
// Every error is a std::invalid_argument naming the spec, the token and what is wrong.
#pragma once

#include "tpu_nn/graph.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace tpu_nn {

enum class LayerKind { Block, Conv, Residual, Pool, Activation, LayerNorm, Flatten, Dense };

struct Layer {
    LayerKind kind = LayerKind::Dense;
    std::size_t units = 0; // filters (Block, Conv), outputs (Dense)
    Window window;         // kernel (Block, Conv, Residual) or pooling window
    std::size_t groups = 1;
    PoolKind pool = PoolKind::Max;
    Act act = Act::Relu;
};

struct Spec {
    bool mlp = false; // "mlp-..." (a vector input); else "cnn-HxWxC-..."
    Shape input;
    std::vector<Layer> layers;
    std::size_t classes = 0;
};

Spec parse_spec(const std::string &text);
std::string print_spec(const Spec &spec);
// One layer's token ("c16k5", "max3s2", "d128"; a dense layer as "128" after another).
std::string layer_token(const Layer &l, bool after_dense = false);
// The graph of `spec`, named print_spec(spec): parameters conv<i>.w|b (every convolution, in
// order), ln<i>.g|b, layer<j>.w|b (every dense layer, the classes' last).
Graph build_graph(const Spec &spec);
inline Graph graph_from_spec(const std::string &text) {
    return build_graph(parse_spec(text));
}

} // namespace tpu_nn
