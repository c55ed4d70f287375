// SPDX-License-Identifier: MIT
// activation.cpp - the elementwise activations whose gradient the card computes
// (activation_grad): relu, sigmoid, tanh, and gelu in its tanh approximation x s(k (x + a x^3))
// with s the logistic function, k = 2 sqrt(2 / pi), a = 0.044715 (docs/hardware.md).
#include "rules.hpp"

#include <cmath>

namespace tpu_nn {

namespace {

constexpr float gelu_k = 1.5957691216057308f; // 2 sqrt(2 / pi)
constexpr float gelu_a = 0.044715f;

float sigmoid(float x) {
    return 1.0f / (1.0f + std::exp(-x));
}

Shape infer(const Attrs &, std::span<const Shape> in) {
    return in[0];
}
std::vector<ParamSlot> params(const Attrs &, std::span<const Shape>) {
    return {};
}

float apply(Act a, float x) {
    switch (a) {
    case Act::Relu:
        return x > 0.0f ? x : 0.0f;
    case Act::Sigmoid:
        return sigmoid(x);
    case Act::Tanh:
        return std::tanh(x);
    case Act::Gelu:
        return x * sigmoid(gelu_k * (x + gelu_a * x * x * x));
    }
    return x;
}

// f'(x) from the input x and the output y.
float derivative(Act a, float x, float y) {
    switch (a) {
    case Act::Relu:
        return x > 0.0f ? 1.0f : 0.0f;
    case Act::Sigmoid:
        return y - y * y;
    case Act::Tanh:
        return 1.0f - y * y;
    case Act::Gelu: {
        const float s = sigmoid(gelu_k * (x + gelu_a * x * x * x));
        return s + (s - s * s) * x * (gelu_k + 3.0f * gelu_a * gelu_k * x * x);
    }
    }
    return 1.0f;
}

void forward(const CpuCall &c) {
    const Act a = c.attrs.act;
    const std::size_t n = c.batch * elements(c.out_shape);
    for (std::size_t i = 0; i < n; ++i)
        c.out[i] = apply(a, c.in[0][i]);
}

void vjp(const CpuCall &c) {
    const Act a = c.attrs.act;
    const std::size_t n = c.batch * elements(c.out_shape);
    if (c.din[0] != nullptr)
        for (std::size_t i = 0; i < n; ++i)
            c.din[0][i] += derivative(a, c.in[0][i], c.out[i]) * c.dout[i];
}

} // namespace

const OpRule activation_rule{"activation", 1, infer, params, forward, vjp};

} // namespace tpu_nn
