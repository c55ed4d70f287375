// SPDX-License-Identifier: MIT
// op.hpp - the layers a tpu_nn model is made of, each declared once (src/ops/<op>.cpp) as an
// OpRule: its arity, its output shape from its inputs' (with a clear error when they do not
// fit), its parameters (name suffix, shape, initialisation) and its fp32 CPU forward and
// vector-Jacobian product. Shapes are per sample (no batch dimension): images H x W x C
// (NHWC in memory), vectors [F]. The card's lowering of each op is card_lowering.hpp's.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace tpu_nn {

using Shape = std::vector<std::size_t>; // per sample
std::size_t elements(const Shape &s);
std::string to_string(const Shape &s); // "28x28x1"

enum class OpKind { Input, Dense, Conv2d, Pool, Flatten, Activation, LayerNorm, Add };
enum class Act { Relu, Sigmoid, Tanh, Gelu }; // the activations whose gradient the card has
enum class PoolKind { Max, Avg };

// A kernel or pooling window: kh x kw at strides sh x sw over the input zero-padded (max pooling:
// -inf) by ph rows above and below and pw columns left and right.
struct Window {
    std::size_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;
    std::size_t out_h(std::size_t h) const { return (h + 2 * ph - kh) / sh + 1; }
    std::size_t out_w(std::size_t w) const { return (w + 2 * pw - kw) / sw + 1; }
};

// What each kind reads from its attributes (the rest keep their defaults).
struct Attrs {
    std::size_t units = 0;  // Dense: outputs; Conv2d: filters
    Window window;          // Conv2d: kernel; Pool: window
    std::size_t groups = 1; // Conv2d
    Act act = Act::Relu;    // Activation
    PoolKind pool = PoolKind::Max;
    float eps = 1e-5f; // LayerNorm
};

// How a parameter starts: He-normal (stddev sqrt(2 / fan_in)), zeros or ones.
enum class Init { He, Zeros, Ones };

struct ParamSlot {
    std::string suffix; // appended to the node's name: "w", "b", "g"
    Shape shape;
    Init init = Init::Zeros;
    std::size_t fan_in = 0; // He
};

// One op on a batch of `batch` samples: its inputs and parameters, row-major, batch first. The
// forward writes `out`; the vjp reads `dout` and adds the gradients into `din` (null where no
// gradient is wanted: the graph's input) and `dparams`.
struct CpuCall {
    const Attrs &attrs;
    std::size_t batch = 0;
    std::span<const Shape> in_shapes;
    Shape out_shape;
    std::vector<const float *> in;
    std::vector<const float *> params;
    float *out = nullptr;
    const float *dout = nullptr;
    std::vector<float *> din;
    std::vector<float *> dparams;
};

struct OpRule {
    const char *name;
    std::size_t arity;
    // Throws std::invalid_argument saying what does not fit (the graph adds the node's name).
    Shape (*infer)(const Attrs &, std::span<const Shape> in);
    std::vector<ParamSlot> (*params)(const Attrs &, std::span<const Shape> in);
    void (*forward)(const CpuCall &);
    void (*vjp)(const CpuCall &);
};

const OpRule &op_rule(OpKind kind);

const char *act_name(Act a); // "relu", "sigmoid", "tanh", "gelu"

} // namespace tpu_nn
