// SPDX-License-Identifier: MIT
// card_model.hpp - a network loaded onto the card for inference (tpu_nn::CardInference): raw
// samples standardised on the host, then the plan's layers on the card; results equal
// reference_logits() bit for bit. One CardModel is used by one thread at a time.
#pragma once

#include "tpu_infer/network.hpp"

#include <tpurt/device.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace tpu_infer {

class CardModel {
  public:
    // Throws tpurt::Error if the card refuses the tensors (e.g. out of memory).
    CardModel(tpurt::Device &device, const Network &net, std::size_t max_batch);
    // The logits (batch x outputs()) of `batch` raw samples (batch x inputs()); batches larger
    // than max_batch() run as several card batches.
    std::vector<float> logits(const float *raw, std::size_t batch);
    const std::string &name() const { return name_; }
    const char *precision() const { return precision_; } // "bf16" or "int8"
    std::size_t inputs() const { return card_.plan().inputs(); }
    std::size_t outputs() const { return card_.plan().classes(); }
    std::size_t max_batch() const { return card_.max_batch(); }

  private:
    std::string name_;
    const char *precision_;
    InputTransform input_;
    tpu_nn::CardInference card_;
};

inline std::unique_ptr<CardModel> load_on_card(tpurt::Device &device, const Network &net,
                                               std::size_t max_batch) {
    return std::make_unique<CardModel>(device, net, max_batch);
}

} // namespace tpu_infer
