// SPDX-License-Identifier: MIT
// add.cpp (card) - the elementwise add; the vjp copies dy to both inputs' gradients.
#include "rules.hpp"

namespace tpu_nn {

namespace {

void forward(const CardCall &c) {
    tpurt::add(c.stream, *c.in[0], *c.in[1], c.out);
}

void vjp(const CardCall &c) {
    for (const tpurt::Tensor *d : c.din)
        if (d != nullptr)
            copy_on_card(c.stream, *c.dout, *d);
}

} // namespace

const CardRule add_card{no_check, forward, vjp, false, Needs::Output, Needs::Any, false, false};

} // namespace tpu_nn
