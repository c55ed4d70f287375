// SPDX-License-Identifier: MIT
// loss.hpp - the classifiers' loss on the CPU: softmax cross-entropy of a batch of logits against
// its labels, with the gradient of the mean loss with respect to the logits (tpu_nn's CPU
// executor's loss, and the reference for the card's fused softmax_cross_entropy).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tpu_model {

// The loss of a batch and the gradient of the mean loss with respect to the logits.
struct LossResult {
    float loss = 0.0f;       // mean cross-entropy over the batch
    std::size_t correct = 0; // argmax(logits) == label
    std::vector<float> dlogits;
};
LossResult softmax_cross_entropy(const std::vector<float> &logits, std::size_t batch,
                                 std::size_t classes, const std::uint8_t *labels);

} // namespace tpu_model
