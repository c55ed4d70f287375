// SPDX-License-Identifier: MIT
// add.cpp - the elementwise sum of two nodes of one shape (a residual connection); its vjp
// passes dy to both.
#include "rules.hpp"

#include <stdexcept>

namespace tpu_nn {

namespace {

Shape infer(const Attrs &, std::span<const Shape> in) {
    if (in[0] != in[1])
        throw std::invalid_argument("adds two nodes of one shape, not " + to_string(in[0]) +
                                    " and " + to_string(in[1]));
    return in[0];
}

std::vector<ParamSlot> params(const Attrs &, std::span<const Shape>) {
    return {};
}

void forward(const CpuCall &c) {
    const std::size_t n = c.batch * elements(c.out_shape);
    for (std::size_t i = 0; i < n; ++i)
        c.out[i] = c.in[0][i] + c.in[1][i];
}

void vjp(const CpuCall &c) {
    const std::size_t n = c.batch * elements(c.out_shape);
    for (float *d : c.din)
        if (d != nullptr)
            for (std::size_t i = 0; i < n; ++i)
                d[i] += c.dout[i];
}

} // namespace

const OpRule add_rule{"add", 2, infer, params, forward, vjp};

} // namespace tpu_nn
