// SPDX-License-Identifier: MIT
// dense.cpp (card) - y = x W + b by dense() (a fused ReLU in its epilogue); the vjp
// dW = x^T dy (matmul_tn), db = column sums of dy, dx = dy W^T (matmul_nt).
#include "rules.hpp"

namespace tpu_nn {

namespace {

void forward(const CardCall &c) {
    tpurt::dense(c.stream, *c.in[0], *c.params[0].value, c.params[1].value, c.out, c.epilogue);
}

void vjp(const CardCall &c) {
    tpurt::matmul_tn(c.stream, *c.in[0], *c.dout, *c.params[0].grad);
    tpurt::column_sums(c.stream, *c.dout, *c.params[1].grad);
    if (c.din[0] != nullptr)
        tpurt::matmul_nt(c.stream, *c.dout, *c.params[0].value, *c.din[0]);
}

} // namespace

const CardRule dense_card{no_check,       forward,        vjp,   false,
                          Needs::Compute, Needs::Compute, false, true};

} // namespace tpu_nn
