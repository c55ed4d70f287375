// SPDX-License-Identifier: MIT
// chunked_model.hpp - what every CardModel shares: the batch loop that runs a request of any
// size as card batches of at most max_batch rows (card_model.cpp's MLPs, card_cnn.cpp's CNNs),
// and the tensor upload of host weights.
#pragma once

#include "tpu_infer/card_model.hpp"

#include <tpurt/tensor.hpp>

#include <algorithm>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace tpu_infer::detail {

template <typename T>
tpurt::Tensor upload(tpurt::Device &d, const std::vector<T> &v, std::vector<std::size_t> shape) {
    return tpurt::Tensor::from_host<T>(d, std::span<const T>(v), std::move(shape));
}

class ChunkedModel : public CardModel {
  public:
    ChunkedModel(std::string name, std::size_t inputs, std::size_t outputs, std::size_t max_batch)
        : name_(std::move(name)), inputs_(inputs), outputs_(outputs), max_batch_(max_batch) {}

    std::vector<float> logits(const float *raw, std::size_t batch) override {
        std::vector<float> out(batch * outputs_);
        for (std::size_t r = 0; r < batch; r += max_batch_) {
            const std::size_t m = std::min(max_batch_, batch - r);
            run_chunk(raw + r * inputs_, m, out.data() + r * outputs_);
        }
        return out;
    }
    std::string name() const override { return name_; }
    std::size_t inputs() const override { return inputs_; }
    std::size_t outputs() const override { return outputs_; }
    std::size_t max_batch() const override { return max_batch_; }

  protected:
    // The logits of m <= max_batch raw samples into out (m x outputs).
    virtual void run_chunk(const float *raw, std::size_t m, float *out) = 0;
    std::string name_;
    std::size_t inputs_, outputs_, max_batch_;
};

// The CNNs on the card (card_cnn.cpp).
std::unique_ptr<CardModel> load_cnn_on_card(tpurt::Device &device, const FloatCnn &net,
                                            std::size_t max_batch);
std::unique_ptr<CardModel> load_cnn_on_card(tpurt::Device &device, const Int8Cnn &net,
                                            std::size_t max_batch);

} // namespace tpu_infer::detail
