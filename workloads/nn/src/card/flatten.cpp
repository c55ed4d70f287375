// SPDX-License-Identifier: MIT
// flatten.cpp (card) - a copy of the image as rows of features (NHWC is already h, w, c order),
// and of the gradient back.
#include "rules.hpp"

namespace tpu_nn {

namespace {

void forward(const CardCall &c) {
    copy_on_card(c.stream, *c.in[0], c.out);
}

void vjp(const CardCall &c) {
    if (c.din[0] != nullptr)
        copy_on_card(c.stream, *c.dout, *c.din[0]);
}

} // namespace

const CardRule flatten_card{no_check, forward, vjp, false, Needs::Any, Needs::Any, false, false};

} // namespace tpu_nn
