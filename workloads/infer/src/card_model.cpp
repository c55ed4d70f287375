// SPDX-License-Identifier: MIT
// card_model.cpp - the bf16 and int8 MLPs on the card (see card_model.hpp): per layer one dense
// job (bf16: bias and ReLU on the card, bf16 hidden activations, fp32 logits; int8: int32 sums
// to fp32 with the rescaled bias and ReLU), then for int8 a VECTOR multiply by the per-channel
// factors and, between layers, the conversion to int8.
#include "tpu_infer/card_model.hpp"

#include "tpu_infer/reference.hpp"

#include <tpurt/tensor_ops.hpp>

#include <algorithm>
#include <span>

namespace tpu_infer {
namespace {

template <typename T>
tpurt::Tensor upload(tpurt::Device &d, const std::vector<T> &v, std::vector<std::size_t> shape) {
    return tpurt::Tensor::from_host<T>(d, std::span<const T>(v), std::move(shape));
}

// The batch loop shared by both models: chunks of at most max_batch rows through run_chunk.
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
    virtual void run_chunk(const float *raw, std::size_t m, float *out) = 0;
    std::string name_;
    std::size_t inputs_, outputs_, max_batch_;
};

class Bf16Mlp final : public ChunkedModel {
  public:
    Bf16Mlp(tpurt::Device &d, const FloatMlp &net, std::size_t max_batch)
        : ChunkedModel(net.name, net.inputs(), net.outputs(), max_batch), device_(d),
          input_(net.input) {
        acts_.push_back(tpurt::Tensor::empty(d, tpurt::DType::Bf16, {max_batch, net.inputs()}));
        for (std::size_t i = 0; i < net.layers.size(); ++i) {
            const FloatDense &l = net.layers[i];
            std::vector<tpurt::Bf16> w(l.w.size());
            std::transform(l.w.begin(), l.w.end(), w.begin(), tpurt::Bf16::from_float);
            weights_.push_back(upload(d, w, {l.in, l.out}));
            biases_.push_back(upload(d, l.b, {l.out}));
            const bool last = i + 1 == net.layers.size();
            acts_.push_back(tpurt::Tensor::empty(d, last ? tpurt::DType::Fp32 : tpurt::DType::Bf16,
                                                 {max_batch, l.out}));
        }
    }
    const char *precision() const override { return "bf16"; }

  private:
    void run_chunk(const float *raw, std::size_t m, float *out) override {
        acts_[0].slice(0, 0, m).copy_from_host(bf16_input(input_, raw, m * inputs_));
        for (std::size_t i = 0; i < weights_.size(); ++i) {
            const bool last = i + 1 == weights_.size();
            tpurt::Tensor y = acts_[i + 1].slice(0, 0, m);
            tpurt::dense(device_, acts_[i].slice(0, 0, m), weights_[i], &biases_[i], y,
                         last ? tpurt::Activation::None : tpurt::Activation::Relu);
        }
        acts_.back().slice(0, 0, m).copy_to_host(out, m * outputs_ * sizeof(float));
    }

    tpurt::Device &device_;
    InputTransform input_;
    std::vector<tpurt::Tensor> weights_, biases_, acts_;
};

class Int8MlpOnCard final : public ChunkedModel {
  public:
    Int8MlpOnCard(tpurt::Device &d, const Int8Mlp &net, std::size_t max_batch)
        : ChunkedModel(net.name, net.inputs(), net.outputs(), max_batch), device_(d), net_(net) {
        for (std::size_t i = 0; i < net.layers.size(); ++i) {
            const Int8Dense &l = net.layers[i];
            const Int8LayerConstants k = int8_constants(net, i);
            Layer layer{upload(d, l.wq, {l.in, l.out}),
                        upload(d, k.bias, {l.out}),
                        upload(d, k.mult, {l.out}),
                        tpurt::Tensor::empty(d, tpurt::DType::Int8, {max_batch, l.in}),
                        tpurt::Tensor::empty(d, tpurt::DType::Fp32, {max_batch, l.out}),
                        tpurt::Tensor::empty(d, tpurt::DType::Fp32, {max_batch, l.out})};
            layers_.push_back(std::move(layer));
        }
    }
    const char *precision() const override { return "int8"; }

  private:
    struct Layer {
        tpurt::Tensor wq, bias, mult;
        tpurt::Tensor x;      // int8 input [max_batch, in]
        tpurt::Tensor sums;   // fp32 relu?(int32 sums + bias) [max_batch, out]
        tpurt::Tensor scaled; // fp32 sums * mult [max_batch, out]
    };

    void run_chunk(const float *raw, std::size_t m, float *out) override {
        layers_[0].x.slice(0, 0, m).copy_from_host(int8_input(net_, raw, m * inputs_));
        for (std::size_t i = 0; i < layers_.size(); ++i) {
            Layer &l = layers_[i];
            const bool last = i + 1 == layers_.size();
            tpurt::Tensor sums = l.sums.slice(0, 0, m), scaled = l.scaled.slice(0, 0, m);
            tpurt::dense(device_, l.x.slice(0, 0, m), l.wq, &l.bias, sums,
                         last ? tpurt::Activation::None : tpurt::Activation::Relu);
            tpurt::mul(device_, sums, l.mult, scaled);
            if (!last) {
                tpurt::Tensor next = layers_[i + 1].x.slice(0, 0, m);
                tpurt::cast(device_, scaled, next);
            }
        }
        layers_.back().scaled.slice(0, 0, m).copy_to_host(out, m * outputs_ * sizeof(float));
    }

    tpurt::Device &device_;
    Int8Mlp net_;
    std::vector<Layer> layers_;
};

} // namespace

std::unique_ptr<CardModel> load_on_card(tpurt::Device &device, const Network &net,
                                        std::size_t max_batch) {
    if (max_batch == 0)
        max_batch = 1;
    if (const auto *q = std::get_if<Int8Mlp>(&net))
        return std::make_unique<Int8MlpOnCard>(device, *q, max_batch);
    return std::make_unique<Bf16Mlp>(device, std::get<FloatMlp>(net), max_batch);
}

} // namespace tpu_infer
