// SPDX-License-Identifier: MIT
// cpu_mlp.cpp - forward and backward passes of the CPU MLP and its loss.
#include "tpu_model/cpu_mlp.hpp"

#include <tpu_data/batches.hpp>
#include <tpu_data/error.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tpu_model {

namespace {

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
            w = rng.normal() * scale;
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
    dx_ = std::move(dy);
}

std::vector<Param> CpuMlp::params(const std::string &prefix) {
    std::vector<Param> p;
    for (std::size_t i = 0; i < layers_.size(); ++i) {
        p.push_back({prefix + std::to_string(i) + ".w", &layers_[i].w, &layers_[i].dw});
        p.push_back({prefix + std::to_string(i) + ".b", &layers_[i].b, &layers_[i].db});
    }
    return p;
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

} // namespace tpu_model
