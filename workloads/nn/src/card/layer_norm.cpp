// SPDX-License-Identifier: MIT
// layer_norm.cpp (card) - layer_norm over the last dimension; the vjp layer_norm_grad (dx,
// dgamma, dbeta at once: dx always written).
#include "rules.hpp"

namespace tpu_nn {

namespace {

void forward(const CardCall &c) {
    tpurt::layer_norm(c.stream, *c.in[0], *c.params[0].value, *c.params[1].value, c.out,
                      c.attrs.eps);
}

void vjp(const CardCall &c) {
    tpurt::layer_norm_grad(c.stream, *c.in[0], *c.params[0].value, *c.dout, *c.din[0],
                           *c.params[0].grad, *c.params[1].grad, c.attrs.eps);
}

} // namespace

const CardRule layer_norm_card{no_check, forward, vjp, true, Needs::Fp32, Needs::Fp32, true, true};

} // namespace tpu_nn
