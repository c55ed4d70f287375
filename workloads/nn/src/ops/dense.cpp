// SPDX-License-Identifier: MIT
// dense.cpp - a dense layer y = x W + b on a vector of F features: W [F, units] (He), b [units]
// (zeros). Forward from the bias, products added in ascending input order (the order of the
// hand-written CPU MLP it replaced, whose checkpoints give the same logits); vjp dW += x^T dy, db
// += column sums of dy, dx += dy W^T.
#include "rules.hpp"

#include <stdexcept>

namespace tpu_nn {

namespace {

Shape infer(const Attrs &a, std::span<const Shape> in) {
    if (in[0].size() != 1)
        throw std::invalid_argument("needs a vector of features, not " + to_string(in[0]) +
                                    " (flatten first)");
    if (a.units == 0)
        throw std::invalid_argument("needs at least one output");
    return {a.units};
}

std::vector<ParamSlot> params(const Attrs &a, std::span<const Shape> in) {
    return {{"w", {in[0][0], a.units}, Init::He, in[0][0]}, {"b", {a.units}, Init::Zeros, 0}};
}

void forward(const CpuCall &c) {
    const std::size_t k = c.in_shapes[0][0], n = c.attrs.units;
    const float *w = c.params[0], *b = c.params[1];
    for (std::size_t i = 0; i < c.batch; ++i) {
        float *y = c.out + i * n;
        const float *x = c.in[0] + i * k;
        for (std::size_t j = 0; j < n; ++j)
            y[j] = b[j];
        for (std::size_t kk = 0; kk < k; ++kk) {
            const float xv = x[kk];
            if (xv == 0.0f)
                continue;
            const float *wr = w + kk * n;
            for (std::size_t j = 0; j < n; ++j)
                y[j] += xv * wr[j];
        }
    }
}

void vjp(const CpuCall &c) {
    const std::size_t k = c.in_shapes[0][0], n = c.attrs.units;
    const float *w = c.params[0];
    float *dw = c.dparams[0], *db = c.dparams[1], *dx = c.din[0];
    for (std::size_t i = 0; i < c.batch; ++i) {
        const float *x = c.in[0] + i * k, *dy = c.dout + i * n;
        for (std::size_t j = 0; j < n; ++j)
            db[j] += dy[j];
        for (std::size_t kk = 0; kk < k; ++kk) {
            float *dwr = dw + kk * n;
            const float *wr = w + kk * n;
            float acc = 0.0f;
            for (std::size_t j = 0; j < n; ++j) {
                dwr[j] += x[kk] * dy[j];
                acc += wr[j] * dy[j];
            }
            if (dx != nullptr)
                dx[i * k + kk] += acc;
        }
    }
}

} // namespace

const OpRule dense_rule{"dense", 1, infer, params, forward, vjp};

} // namespace tpu_nn
