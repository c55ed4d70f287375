// SPDX-License-Identifier: MIT
// card_model.hpp - a network loaded onto the card for inference: its weights converted once
// (bf16 from the fp32 master weights, or the int8 weights with their requantisation constants)
// into device tensors, activations in device tensors sized for `max_batch` rows, and logits()
// running the layers as tpurt::dense (plus, for int8, the per-channel rescale as a VECTOR
// multiply and the requantisation as a cast) on the card. Results equal reference_logits() bit
// for bit. One CardModel is used by one thread at a time.
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
    virtual ~CardModel() = default;
    // The logits (batch x outputs()) of `batch` raw samples (batch x inputs()); batches larger
    // than max_batch() run as several card batches.
    virtual std::vector<float> logits(const float *raw, std::size_t batch) = 0;

    virtual std::string name() const = 0;
    virtual const char *precision() const = 0; // "bf16" or "int8"
    virtual std::size_t inputs() const = 0;
    virtual std::size_t outputs() const = 0;
    virtual std::size_t max_batch() const = 0;
};

// Throws tpurt::Error if the card refuses the tensors (e.g. out of memory).
std::unique_ptr<CardModel> load_on_card(tpurt::Device &device, const Network &net,
                                        std::size_t max_batch);

} // namespace tpu_infer
