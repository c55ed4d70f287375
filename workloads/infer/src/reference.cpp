// SPDX-License-Identifier: MIT
// reference.cpp - a network's logits on the CPU in the card's arithmetic, and argmax.
#include "tpu_infer/reference.hpp"

#include <algorithm>

namespace tpu_infer {

std::vector<float> reference_logits(const Network &net, const float *raw, std::size_t batch) {
    const std::vector<float> x = standardise(net.input, raw, batch * net.inputs());
    return tpu_nn::reference_logits(net.plan(), x.data(), batch);
}

std::vector<std::uint32_t> argmax_rows(const std::vector<float> &logits, std::size_t classes) {
    std::vector<std::uint32_t> out(logits.size() / classes);
    for (std::size_t r = 0; r < out.size(); ++r) {
        const float *row = logits.data() + r * classes;
        out[r] = std::uint32_t(std::max_element(row, row + classes) - row);
    }
    return out;
}

} // namespace tpu_infer
