// SPDX-License-Identifier: MIT
// spec_graph.cpp - the Graph of a Spec: each layer token expanded into its nodes (a conv block
// into convolution, relu and max pooling; a residual block into its two convolutions, layer
// norms, relus and the add), dense layers flattening a spatial input first, the classes a dense
// layer without activation; parameters named conv<i>, ln<i>, layer<j> in order.
#include "tpu_nn/spec.hpp"

#include <stdexcept>

namespace tpu_nn {

namespace {

class Builder {
  public:
    explicit Builder(const Spec &spec) : g_(spec.input), x_(g_.input()) {}

    void layer(const Layer &l) {
        switch (l.kind) {
        case LayerKind::Block:
            x_ = g_.activation(conv(x_, l.units, l.window, l.groups), Act::Relu);
            x_ = g_.pool(x_, PoolKind::Max, Window{2, 2, 2, 2, 0, 0});
            return;
        case LayerKind::Conv:
            x_ = conv(x_, l.units, l.window, l.groups);
            return;
        case LayerKind::Residual: {
            const NodeId in = x_;
            const std::size_t c = g_.node(in).shape.back();
            const NodeId t = g_.activation(norm(conv(in, c, l.window, 1)), Act::Relu);
            x_ = g_.activation(g_.add_nodes(in, norm(conv(t, c, l.window, 1))), Act::Relu);
            return;
        }
        case LayerKind::Pool:
            x_ = g_.pool(x_, l.pool, l.window);
            return;
        case LayerKind::Activation:
            x_ = g_.activation(x_, l.act);
            return;
        case LayerKind::LayerNorm:
            x_ = norm(x_);
            return;
        case LayerKind::Flatten:
            x_ = g_.flatten(x_);
            return;
        case LayerKind::Dense:
            x_ = g_.activation(dense(l.units), Act::Relu);
            return;
        }
    }

    Graph finish(std::size_t classes, std::string name) {
        dense(classes);
        g_.set_name(std::move(name));
        return std::move(g_);
    }

  private:
    NodeId conv(NodeId x, std::size_t filters, const Window &k, std::size_t groups) {
        return g_.conv2d(x, "conv" + std::to_string(convs_++), filters, k, groups);
    }
    NodeId norm(NodeId x) { return g_.layer_norm(x, "ln" + std::to_string(norms_++)); }
    NodeId dense(std::size_t units) {
        if (g_.node(x_).shape.size() != 1)
            x_ = g_.flatten(x_);
        x_ = g_.dense(x_, "layer" + std::to_string(denses_++), units);
        return x_;
    }

    Graph g_;
    NodeId x_;
    std::size_t convs_ = 0, norms_ = 0, denses_ = 0;
};

} // namespace

Graph build_graph(const Spec &spec) {
    const std::string name = print_spec(spec);
    Builder b(spec);
    for (std::size_t i = 0; i < spec.layers.size(); ++i) {
        try {
            b.layer(spec.layers[i]);
        } catch (const std::invalid_argument &e) {
            throw std::invalid_argument("model spec \"" + name + "\": layer " +
                                        std::to_string(i + 1) + " \"" +
                                        layer_token(spec.layers[i]) + "\": " + e.what());
        }
    }
    try {
        return b.finish(spec.classes, name);
    } catch (const std::invalid_argument &e) {
        throw std::invalid_argument("model spec \"" + name + "\": the classes: " + e.what());
    }
}

} // namespace tpu_nn
