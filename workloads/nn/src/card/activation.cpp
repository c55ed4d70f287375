// SPDX-License-Identifier: MIT
// activation.cpp (card) - unary() with ACTIVATE's function; the vjp activation_grad() from the
// input (relu, gelu) or the output (sigmoid, tanh).
#include "rules.hpp"

namespace tpu_nn {

namespace {

tpurt::Activation function(Act a) {
    switch (a) {
    case Act::Relu:
        return tpurt::Activation::Relu;
    case Act::Sigmoid:
        return tpurt::Activation::Sigmoid;
    case Act::Tanh:
        return tpurt::Activation::Tanh;
    case Act::Gelu:
        return tpurt::Activation::Gelu;
    }
    return tpurt::Activation::None;
}

void forward(const CardCall &c) {
    tpurt::unary(c.stream, function(c.attrs.act), *c.in[0], c.out);
}

void vjp(const CardCall &c) {
    if (c.din[0] == nullptr)
        return;
    const Act a = c.attrs.act;
    const tpurt::GradFunction f = a == Act::Relu      ? tpurt::GradFunction::Relu
                                  : a == Act::Sigmoid ? tpurt::GradFunction::Sigmoid
                                  : a == Act::Tanh    ? tpurt::GradFunction::Tanh
                                                      : tpurt::GradFunction::Gelu;
    const bool from_output = a == Act::Sigmoid || a == Act::Tanh;
    tpurt::activation_grad(c.stream, f, from_output ? c.out : *c.in[0], *c.dout, *c.din[0]);
}

} // namespace

const CardRule activation_card{no_check, forward, vjp, false, Needs::Any, Needs::Any, false, false};

} // namespace tpu_nn
