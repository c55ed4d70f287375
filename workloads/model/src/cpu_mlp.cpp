// SPDX-License-Identifier: MIT
// cpu_mlp.cpp - forward and backward passes of the CPU MLP, its loss, and its optimisers.
#include "tpu_model/cpu_mlp.hpp"

#include <tpu_data/batches.hpp>
#include <tpu_data/error.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tpu_model {

namespace {

// Normal(0, 1) from two uniforms (Box-Muller), on the data loader's portable generator.
float normal(tpu_data::SplitMix64 &rng) {
    const double u1 = (double(rng.next() >> 11) + 1.0) / 9007199254740993.0;
    const double u2 = double(rng.next() >> 11) / 9007199254740992.0;
    return float(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
}

// y (m x n) = x (m x k) W (k x n) + b
void dense_forward(const float *x, const Dense &l, std::size_t m, float *y) {
    for (std::size_t i = 0; i < m; ++i) {
        float *row = y + i * l.out;
        std::copy(l.b.begin(), l.b.end(), row);
        for (std::size_t k = 0; k < l.in; ++k) {
            const float xv = x[i * l.in + k];
            if (xv == 0.0f)
                continue;
            const float *w = l.w.data() + k * l.out;
            for (std::size_t j = 0; j < l.out; ++j)
                row[j] += xv * w[j];
        }
    }
}

// The tensor `name` of `c` with exactly `count` values, or a DataError saying what differs.
const std::vector<float> &expect(const Checkpoint &c, const std::string &name, std::size_t count) {
    const NamedTensor *t = c.find(name);
    if (t == nullptr)
        throw tpu_data::DataError("checkpoint of " + c.model, "no tensor " + name);
    if (t->data.size() != count)
        throw tpu_data::DataError("checkpoint of " + c.model,
                                  "tensor " + name + " has " + std::to_string(t->data.size()) +
                                      " values, this model needs " + std::to_string(count));
    return t->data;
}

std::string key(const char *prefix, std::size_t i, const char *suffix) {
    return prefix + std::to_string(i) + suffix;
}

// Saves (or restores) per-layer state vectors named prefix<i>.w and prefix<i>.b.
void save_pairs(Checkpoint &c, const char *prefix, const std::vector<std::vector<float>> &w,
                const std::vector<std::vector<float>> &b) {
    for (std::size_t i = 0; i < w.size(); ++i) {
        c.tensors.push_back({key(prefix, i, ".w"), {std::uint32_t(w[i].size())}, w[i]});
        c.tensors.push_back({key(prefix, i, ".b"), {std::uint32_t(b[i].size())}, b[i]});
    }
}
void load_pairs(const Checkpoint &c, const char *prefix, const std::vector<Dense> &layers,
                std::vector<std::vector<float>> &w, std::vector<std::vector<float>> &b) {
    w.clear();
    b.clear();
    if (c.find(key(prefix, 0, ".w")) == nullptr)
        return; // saved before the first step: the state is still the fresh one
    for (std::size_t i = 0; i < layers.size(); ++i) {
        w.push_back(expect(c, key(prefix, i, ".w"), layers[i].w.size()));
        b.push_back(expect(c, key(prefix, i, ".b"), layers[i].b.size()));
    }
}

} // namespace

LossResult softmax_cross_entropy(const std::vector<float> &logits, std::size_t batch,
                                 std::size_t classes, const std::uint8_t *labels) {
    LossResult r;
    r.dlogits.resize(batch * classes);
    double total = 0.0;
    for (std::size_t i = 0; i < batch; ++i) {
        const float *z = logits.data() + i * classes;
        const float top = *std::max_element(z, z + classes);
        double sum = 0.0;
        for (std::size_t c = 0; c < classes; ++c)
            sum += std::exp(double(z[c] - top));
        const double log_sum = std::log(sum) + top;
        total += log_sum - z[labels[i]];
        if (std::size_t(std::max_element(z, z + classes) - z) == labels[i])
            ++r.correct;
        for (std::size_t c = 0; c < classes; ++c) {
            const double p = std::exp(double(z[c]) - log_sum);
            r.dlogits[i * classes + c] = float((p - (c == labels[i] ? 1.0 : 0.0)) / double(batch));
        }
    }
    r.loss = float(total / double(batch));
    return r;
}

CpuMlp::CpuMlp(const std::vector<std::size_t> &sizes, std::uint64_t seed) {
    if (sizes.size() < 2)
        throw std::invalid_argument("CpuMlp: needs at least an input and an output size");
    tpu_data::SplitMix64 rng(seed);
    for (std::size_t i = 0; i + 1 < sizes.size(); ++i) {
        Dense l;
        l.in = sizes[i];
        l.out = sizes[i + 1];
        l.w.resize(l.in * l.out);
        const float scale = std::sqrt(2.0f / float(l.in));
        for (float &w : l.w)
            w = normal(rng) * scale;
        l.b.assign(l.out, 0.0f);
        l.dw.assign(l.w.size(), 0.0f);
        l.db.assign(l.out, 0.0f);
        layers_.push_back(std::move(l));
    }
}

const std::vector<float> &CpuMlp::forward(const float *x, std::size_t batch) {
    batch_ = batch;
    acts_.resize(layers_.size() + 1);
    acts_[0].assign(x, x + batch * layers_.front().in);
    for (std::size_t i = 0; i < layers_.size(); ++i) {
        const Dense &l = layers_[i];
        acts_[i + 1].resize(batch * l.out);
        dense_forward(acts_[i].data(), l, batch, acts_[i + 1].data());
        if (i + 1 < layers_.size())
            for (float &v : acts_[i + 1])
                v = std::max(v, 0.0f);
    }
    return acts_.back();
}

void CpuMlp::backward(const std::vector<float> &dlogits) {
    std::vector<float> dy = dlogits;
    for (std::size_t li = layers_.size(); li-- > 0;) {
        Dense &l = layers_[li];
        const std::vector<float> &x = acts_[li];
        std::fill(l.dw.begin(), l.dw.end(), 0.0f);
        std::fill(l.db.begin(), l.db.end(), 0.0f);
        std::vector<float> dx(batch_ * l.in, 0.0f);
        for (std::size_t i = 0; i < batch_; ++i) {
            const float *g = dy.data() + i * l.out;
            for (std::size_t j = 0; j < l.out; ++j)
                l.db[j] += g[j];
            for (std::size_t k = 0; k < l.in; ++k) {
                const float xv = x[i * l.in + k];
                float *dw = l.dw.data() + k * l.out;
                const float *w = l.w.data() + k * l.out;
                float acc = 0.0f;
                for (std::size_t j = 0; j < l.out; ++j) {
                    dw[j] += xv * g[j];
                    acc += w[j] * g[j];
                }
                dx[i * l.in + k] = acc;
            }
        }
        if (li > 0) // through the ReLU that produced x
            for (std::size_t e = 0; e < dx.size(); ++e)
                if (x[e] <= 0.0f)
                    dx[e] = 0.0f;
        dy = std::move(dx);
    }
}

void CpuMlp::save(Checkpoint &c) const {
    for (std::size_t i = 0; i < layers_.size(); ++i) {
        const Dense &l = layers_[i];
        c.tensors.push_back(
            {key("layer", i, ".w"), {std::uint32_t(l.in), std::uint32_t(l.out)}, l.w});
        c.tensors.push_back({key("layer", i, ".b"), {std::uint32_t(l.out)}, l.b});
    }
}

void CpuMlp::load(const Checkpoint &c) {
    for (std::size_t i = 0; i < layers_.size(); ++i) {
        Dense &l = layers_[i];
        l.w = expect(c, key("layer", i, ".w"), l.w.size());
        l.b = expect(c, key("layer", i, ".b"), l.b.size());
    }
}

void SgdMomentum::save(Checkpoint &c) const {
    save_pairs(c, "sgd.v", vw_, vb_);
}

void SgdMomentum::load(const Checkpoint &c, const std::vector<Dense> &layers) {
    load_pairs(c, "sgd.v", layers, vw_, vb_);
}

void Adam::save(Checkpoint &c) const {
    save_pairs(c, "adam.m", mw_, mb_);
    save_pairs(c, "adam.v", vw_, vb_);
    c.notes["adam.t"] = std::to_string(t_);
}

void Adam::load(const Checkpoint &c, const std::vector<Dense> &layers) {
    load_pairs(c, "adam.m", layers, mw_, mb_);
    load_pairs(c, "adam.v", layers, vw_, vb_);
    auto t = c.notes.find("adam.t");
    if (t == c.notes.end())
        throw tpu_data::DataError("checkpoint of " + c.model, "no adam.t note (Adam's step count)");
    t_ = std::stoull(t->second);
}

void SgdMomentum::step(std::vector<Dense> &layers) {
    if (vw_.empty())
        for (const Dense &l : layers) {
            vw_.emplace_back(l.w.size(), 0.0f);
            vb_.emplace_back(l.b.size(), 0.0f);
        }
    auto update = [this](std::vector<float> &p, const std::vector<float> &g,
                         std::vector<float> &v) {
        for (std::size_t e = 0; e < p.size(); ++e) {
            v[e] = momentum_ * v[e] + g[e];
            p[e] -= lr_ * v[e];
        }
    };
    for (std::size_t i = 0; i < layers.size(); ++i) {
        update(layers[i].w, layers[i].dw, vw_[i]);
        update(layers[i].b, layers[i].db, vb_[i]);
    }
}

void Adam::step(std::vector<Dense> &layers) {
    if (mw_.empty())
        for (const Dense &l : layers) {
            mw_.emplace_back(l.w.size(), 0.0f);
            vw_.emplace_back(l.w.size(), 0.0f);
            mb_.emplace_back(l.b.size(), 0.0f);
            vb_.emplace_back(l.b.size(), 0.0f);
        }
    ++t_;
    const float c1 = 1.0f - std::pow(beta1_, float(t_));
    const float c2 = 1.0f - std::pow(beta2_, float(t_));
    auto update = [&](std::vector<float> &p, const std::vector<float> &g, std::vector<float> &m,
                      std::vector<float> &v) {
        for (std::size_t e = 0; e < p.size(); ++e) {
            m[e] = beta1_ * m[e] + (1.0f - beta1_) * g[e];
            v[e] = beta2_ * v[e] + (1.0f - beta2_) * g[e] * g[e];
            p[e] -= lr_ * (m[e] / c1) / (std::sqrt(v[e] / c2) + eps_);
        }
    };
    for (std::size_t i = 0; i < layers.size(); ++i) {
        update(layers[i].w, layers[i].dw, mw_[i], vw_[i]);
        update(layers[i].b, layers[i].db, mb_[i], vb_[i]);
    }
}

} // namespace tpu_model
