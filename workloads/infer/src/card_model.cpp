// SPDX-License-Identifier: MIT
// card_model.cpp - a network on the card: its plan uploaded once, raw samples standardised here.
#include "tpu_infer/card_model.hpp"

namespace tpu_infer {

CardModel::CardModel(tpurt::Device &device, const Network &net, std::size_t max_batch)
    : name_(net.name), precision_(net.precision()), input_(net.input),
      card_(device, net.plan(), max_batch) {}

std::vector<float> CardModel::logits(const float *raw, std::size_t batch) {
    const std::vector<float> x = standardise(input_, raw, batch * inputs());
    return card_.logits(x.data(), batch);
}

} // namespace tpu_infer
