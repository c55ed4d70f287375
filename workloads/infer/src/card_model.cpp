// SPDX-License-Identifier: MIT
// card_model.cpp - the bf16 and int8 MLPs on the card (see card_model.hpp): the input prepared
// on the host (standardised, converted), then the dense stack (dense_stacks.hpp); the CNNs are
// card_cnn.cpp's.
#include "tpu_infer/card_model.hpp"

#include "tpu_infer/reference.hpp"

#include "chunked_model.hpp"
#include "dense_stacks.hpp"

namespace tpu_infer {
namespace {

using detail::ChunkedModel;

class Bf16Mlp final : public ChunkedModel {
  public:
    Bf16Mlp(tpurt::Device &d, const FloatMlp &net, std::size_t max_batch)
        : ChunkedModel(net.name, net.inputs(), net.outputs(), max_batch), input_(net.input),
          stack_(d, net.layers, max_batch) {}
    const char *precision() const override { return "bf16"; }

  private:
    void run_chunk(const float *raw, std::size_t m, float *out) override {
        stack_.input().slice(0, 0, m).copy_from_host(bf16_input(input_, raw, m * inputs_));
        stack_.run(m, out);
    }

    InputTransform input_;
    detail::Bf16DenseStack stack_;
};

class Int8MlpOnCard final : public ChunkedModel {
  public:
    Int8MlpOnCard(tpurt::Device &d, const Int8Mlp &net, std::size_t max_batch)
        : ChunkedModel(net.name, net.inputs(), net.outputs(), max_batch), input_(net.input),
          x_scale_(net.layers.front().x_scale), stack_(d, net.layers, max_batch) {}
    const char *precision() const override { return "int8"; }

  private:
    void run_chunk(const float *raw, std::size_t m, float *out) override {
        stack_.input().slice(0, 0, m).copy_from_host(
            int8_input(input_, x_scale_, raw, m * inputs_));
        stack_.run(m, out);
    }

    InputTransform input_;
    float x_scale_;
    detail::Int8DenseStack stack_;
};

} // namespace

std::unique_ptr<CardModel> load_on_card(tpurt::Device &device, const Network &net,
                                        std::size_t max_batch) {
    if (max_batch == 0)
        max_batch = 1;
    if (const auto *q = std::get_if<Int8Mlp>(&net))
        return std::make_unique<Int8MlpOnCard>(device, *q, max_batch);
    if (const auto *c = std::get_if<FloatCnn>(&net))
        return detail::load_cnn_on_card(device, *c, max_batch);
    if (const auto *c = std::get_if<Int8Cnn>(&net))
        return detail::load_cnn_on_card(device, *c, max_batch);
    return std::make_unique<Bf16Mlp>(device, std::get<FloatMlp>(net), max_batch);
}

} // namespace tpu_infer
