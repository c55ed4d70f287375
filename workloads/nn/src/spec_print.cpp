// SPDX-License-Identifier: MIT
// spec_print.cpp - a Spec in the canonical form of spec.hpp's grammar: options only where they
// differ from their defaults, in the order k, s, p, g; the first of consecutive dense layers as
// d<N>, the others as <N>; "d" before the classes where a spatial layer precedes them (as
// today's CNN names with no hidden layer would read).
#include "tpu_nn/spec.hpp"

namespace tpu_nn {

namespace {

std::string conv_options(const Layer &l, bool groups) {
    const Window &k = l.window;
    std::string s;
    if (k.kh != 3)
        s += "k" + std::to_string(k.kh);
    if (k.sh != 1)
        s += "s" + std::to_string(k.sh);
    if (k.ph != (k.kh - 1) / 2)
        s += "p" + std::to_string(k.ph);
    if (groups && l.groups != 1)
        s += "g" + std::to_string(l.groups);
    return s;
}

} // namespace

std::string layer_token(const Layer &l, bool after_dense) {
    switch (l.kind) {
    case LayerKind::Block:
        return "c" + std::to_string(l.units) + conv_options(l, true);
    case LayerKind::Conv:
        return "conv" + std::to_string(l.units) + conv_options(l, true);
    case LayerKind::Residual:
        return "res" + conv_options(l, false);
    case LayerKind::Pool: {
        std::string s = (l.pool == PoolKind::Max ? "max" : "avg") + std::to_string(l.window.kh);
        if (l.window.sh != l.window.kh)
            s += "s" + std::to_string(l.window.sh);
        if (l.window.ph != 0)
            s += "p" + std::to_string(l.window.ph);
        return s;
    }
    case LayerKind::Activation:
        return act_name(l.act);
    case LayerKind::LayerNorm:
        return "ln";
    case LayerKind::Flatten:
        return "flat";
    case LayerKind::Dense:
        return (after_dense ? "" : "d") + std::to_string(l.units);
    }
    return "?";
}

std::string print_spec(const Spec &spec) {
    std::string s =
        spec.mlp ? "mlp-" + std::to_string(spec.input.at(0)) : "cnn-" + to_string(spec.input);
    bool after_dense = spec.mlp, flat = spec.mlp;
    for (const Layer &l : spec.layers) {
        s += "-" + layer_token(l, after_dense);
        after_dense = l.kind == LayerKind::Dense;
        flat = flat || after_dense || l.kind == LayerKind::Flatten;
    }
    if (!flat)
        s += "-d";
    return s + "-" + std::to_string(spec.classes);
}

} // namespace tpu_nn
