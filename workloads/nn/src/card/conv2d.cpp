// SPDX-License-Identifier: MIT
// conv2d.cpp (card) - a convolution with its bias (and a fused ReLU) in conv2d_layer's epilogue;
// the vjp db = column sums of dy as [N OH OW, F] (unless a conv block wrote it), dW by
// conv2d_weight_grad, dx by conv2d_input_grad. Groups are refused: the runtime's grouped
// convolution gradients have no stream form yet.
#include "rules.hpp"

#include <stdexcept>

namespace tpu_nn {

namespace {

tpurt::Conv2dParams params(const Attrs &a) {
    const Window &k = a.window;
    return {std::uint32_t(k.sh), std::uint32_t(k.sw), std::uint32_t(k.ph), std::uint32_t(k.pw)};
}

void check(const Attrs &a) {
    if (a.groups != 1)
        throw std::invalid_argument("groups > 1 cannot be trained on the card yet "
                                    "(grouped_conv2d's gradients have no stream form)");
}

void forward(const CardCall &c) {
    tpurt::conv2d_layer(c.stream, *c.in[0], *c.params[0].value, c.params[1].value, c.out,
                        params(c.attrs), c.epilogue);
}

void vjp(const CardCall &c) {
    const std::size_t f = c.attrs.units;
    if (!c.bias_grad_written)
        tpurt::column_sums(c.stream, c.dout->reshape({c.dout->element_count() / f, f}),
                           *c.params[1].grad);
    tpurt::conv2d_weight_grad(c.stream, *c.in[0], *c.dout, *c.params[0].grad, params(c.attrs));
    if (c.din[0] != nullptr)
        tpurt::conv2d_input_grad(c.stream, *c.dout, *c.params[0].value, *c.din[0], params(c.attrs));
}

} // namespace

const CardRule conv2d_card{check, forward, vjp, false, Needs::Compute, Needs::Compute, false, true};

} // namespace tpu_nn
