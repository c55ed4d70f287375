// SPDX-License-Identifier: MIT
// pool.cpp (card) - pool2d forward; the vjp by max_pool2d_grad (from x and y: the window's
// first maximum) or avg_pool2d_grad; a conv block's vjp (conv_block_vjp).
#include "rules.hpp"

namespace tpu_nn {

namespace {

tpurt::PoolWindow window(const Attrs &a) {
    const Window &k = a.window;
    return {std::uint32_t(k.kh), std::uint32_t(k.kw), std::uint32_t(k.sh),
            std::uint32_t(k.sw), std::uint32_t(k.ph), std::uint32_t(k.pw)};
}

void forward(const CardCall &c) {
    tpurt::pool2d(c.stream, c.attrs.pool == PoolKind::Max ? tpurt::PoolOp::Max : tpurt::PoolOp::Avg,
                  *c.in[0], c.out, window(c.attrs));
}

void vjp(const CardCall &c) {
    if (c.din[0] == nullptr)
        return;
    if (c.attrs.pool == PoolKind::Max)
        tpurt::max_pool2d_grad(c.stream, *c.in[0], c.out, *c.dout, *c.din[0], window(c.attrs));
    else
        tpurt::avg_pool2d_grad(c.stream, *c.dout, *c.din[0], window(c.attrs));
}

} // namespace

void conv_block_vjp(tpurt::Stream &s, const Attrs &pool, const tpurt::Tensor &conv_out,
                    const tpurt::Tensor &y, const tpurt::Tensor &dy, const tpurt::Tensor &scratch,
                    const tpurt::Tensor &bias_grad, const tpurt::Tensor &dconv) {
    const std::size_t f = y.shape().back();
    tpurt::activation_grad(s, tpurt::GradFunction::Relu, y, dy, scratch);
    tpurt::column_sums(s, scratch.reshape({scratch.element_count() / f, f}), bias_grad);
    tpurt::max_pool2d_grad(s, conv_out, y, scratch, dconv, window(pool));
}

const CardRule pool_card{no_check, forward, vjp, false, Needs::Output, Needs::Any, false, false};

} // namespace tpu_nn
