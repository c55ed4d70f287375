// SPDX-License-Identifier: MIT
// flatten.cpp - an image H x W x C as a vector of H W C features in h, w, c order (the memory
// order of NHWC, so the values are copied as they are, and so is the gradient).
#include "rules.hpp"

#include <algorithm>

namespace tpu_nn {

namespace {

Shape infer(const Attrs &, std::span<const Shape> in) {
    return {elements(in[0])};
}
std::vector<ParamSlot> params(const Attrs &, std::span<const Shape>) {
    return {};
}

void forward(const CpuCall &c) {
    std::copy_n(c.in[0], c.batch * elements(c.out_shape), c.out);
}

void vjp(const CpuCall &c) {
    const std::size_t n = c.batch * elements(c.out_shape);
    if (c.din[0] != nullptr)
        for (std::size_t i = 0; i < n; ++i)
            c.din[0][i] += c.dout[i];
}

} // namespace

const OpRule flatten_rule{"flatten", 1, infer, params, forward, vjp};

} // namespace tpu_nn
