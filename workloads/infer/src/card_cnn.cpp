// SPDX-License-Identifier: MIT
// card_cnn.cpp - the bf16 and int8 CNNs on the card (see card_model.hpp). Per convolution block,
// bf16: one convolution layer job (bias, ReLU, into bf16) and one POOL MAX job; int8: one
// convolution layer job into fp32 (the rescaled bias, ReLU), a VECTOR multiply by the
// per-channel factors, POOL MAX and the conversion to int8 (reference.hpp's
// Int8LayerConstants). The last block pools straight into the dense stack's input, viewed as
// images (the flatten is free: NHWC rows are the dense layer's rows). Results equal
// reference_logits() bit for bit.
#include "chunked_model.hpp"
#include "dense_stacks.hpp"
#include "tpu_infer/reference.hpp"

#include <tpurt/ops/tensor_ops.hpp>

#include <algorithm>

namespace tpu_infer::detail {
namespace {

constexpr tpurt::Conv2dParams same_padding{.pad_h = cnn_kernel / 2, .pad_w = cnn_kernel / 2};

std::vector<std::size_t> nhwc(std::size_t batch, const ImageShape &s) {
    return {batch, s.height, s.width, s.channels};
}

void pool(tpurt::Device &d, const tpurt::Tensor &x, tpurt::Tensor &y) {
    tpurt::pool2d(d, tpurt::PoolOp::Max, x, y, cnn_pool, cnn_pool, cnn_pool, cnn_pool);
}

class Bf16Cnn final : public ChunkedModel {
  public:
    Bf16Cnn(tpurt::Device &d, const FloatCnn &net, std::size_t max_batch)
        : ChunkedModel(net.name, net.inputs(), net.outputs(), max_batch), device_(d),
          input_(net.input), stack_(d, net.dense, max_batch),
          x_(tpurt::Tensor::empty(d, tpurt::DType::Bf16, nhwc(max_batch, net.image))) {
        const std::vector<ImageShape> shapes = block_shapes(net.image, net.convs);
        for (std::size_t i = 0; i < net.convs.size(); ++i) {
            const FloatConv &c = net.convs[i];
            std::vector<tpurt::Bf16> w(c.w.size());
            std::transform(c.w.begin(), c.w.end(), w.begin(), tpurt::Bf16::from_float);
            const bool last = i + 1 == net.convs.size();
            blocks_.push_back(
                {upload(d, w, {cnn_kernel, cnn_kernel, c.in, c.out}), upload(d, c.b, {c.out}),
                 tpurt::Tensor::empty(d, tpurt::DType::Bf16,
                                      {max_batch, shapes[i].height, shapes[i].width, c.out}),
                 last ? stack_.input().reshape(nhwc(max_batch, shapes[i + 1]))
                      : tpurt::Tensor::empty(d, tpurt::DType::Bf16,
                                             nhwc(max_batch, shapes[i + 1]))});
        }
    }
    const char *precision() const override { return "bf16"; }

  private:
    struct Block {
        tpurt::Tensor w, b;
        tpurt::Tensor conv;   // bf16 relu(conv + b) [max_batch, h, w, out]
        tpurt::Tensor pooled; // bf16 [max_batch, h / 2, w / 2, out]
    };

    void run_chunk(const float *raw, std::size_t m, float *out) override {
        x_.slice(0, 0, m).copy_from_host(bf16_input(input_, raw, m * inputs_));
        tpurt::Tensor x = x_.slice(0, 0, m);
        for (Block &b : blocks_) {
            tpurt::Tensor conv = b.conv.slice(0, 0, m), pooled = b.pooled.slice(0, 0, m);
            tpurt::conv2d_layer(device_, x, b.w, &b.b, conv, same_padding, tpurt::Activation::Relu);
            pool(device_, conv, pooled);
            x = pooled;
        }
        stack_.run(m, out);
    }

    tpurt::Device &device_;
    InputTransform input_;
    Bf16DenseStack stack_;
    tpurt::Tensor x_;
    std::vector<Block> blocks_;
};

class Int8CnnOnCard final : public ChunkedModel {
  public:
    Int8CnnOnCard(tpurt::Device &d, const Int8Cnn &net, std::size_t max_batch)
        : ChunkedModel(net.name, net.inputs(), net.outputs(), max_batch), device_(d),
          input_(net.input), x_scale_(net.convs.front().x_scale), stack_(d, net.dense, max_batch),
          x_(tpurt::Tensor::empty(d, tpurt::DType::Int8, nhwc(max_batch, net.image))) {
        const std::vector<ImageShape> shapes = block_shapes(net.image, net.convs);
        for (std::size_t i = 0; i < net.convs.size(); ++i) {
            const Int8Conv &c = net.convs[i];
            const Int8LayerConstants k = int8_conv_constants(net, i);
            const ImageShape conv_shape{shapes[i].height, shapes[i].width, c.out};
            const bool last = i + 1 == net.convs.size();
            blocks_.push_back(
                {upload(d, c.wq, {cnn_kernel, cnn_kernel, c.in, c.out}), upload(d, k.bias, {c.out}),
                 upload(d, k.mult, {c.out}),
                 tpurt::Tensor::empty(d, tpurt::DType::Fp32, nhwc(max_batch, conv_shape)),
                 tpurt::Tensor::empty(d, tpurt::DType::Fp32, nhwc(max_batch, conv_shape)),
                 tpurt::Tensor::empty(d, tpurt::DType::Fp32, nhwc(max_batch, shapes[i + 1])),
                 last ? stack_.input().reshape(nhwc(max_batch, shapes[i + 1]))
                      : tpurt::Tensor::empty(d, tpurt::DType::Int8,
                                             nhwc(max_batch, shapes[i + 1]))});
        }
    }
    const char *precision() const override { return "int8"; }

  private:
    struct Block {
        tpurt::Tensor wq, bias, mult;
        tpurt::Tensor sums;   // fp32 relu(int32 sums + bias) [max_batch, h, w, out]
        tpurt::Tensor scaled; // fp32 sums * mult
        tpurt::Tensor pooled; // fp32 [max_batch, h / 2, w / 2, out]
        tpurt::Tensor next;   // int8 of pooled: the next block's (or the dense stack's) input
    };

    void run_chunk(const float *raw, std::size_t m, float *out) override {
        x_.slice(0, 0, m).copy_from_host(int8_input(input_, x_scale_, raw, m * inputs_));
        tpurt::Tensor x = x_.slice(0, 0, m);
        for (Block &b : blocks_) {
            tpurt::Tensor sums = b.sums.slice(0, 0, m), scaled = b.scaled.slice(0, 0, m),
                          pooled = b.pooled.slice(0, 0, m), next = b.next.slice(0, 0, m);
            tpurt::conv2d_layer(device_, x, b.wq, &b.bias, sums, same_padding,
                                tpurt::Activation::Relu);
            tpurt::mul(device_, sums, b.mult, scaled);
            pool(device_, scaled, pooled);
            tpurt::cast(device_, pooled, next);
            x = next;
        }
        stack_.run(m, out);
    }

    tpurt::Device &device_;
    InputTransform input_;
    float x_scale_;
    Int8DenseStack stack_;
    tpurt::Tensor x_;
    std::vector<Block> blocks_;
};

} // namespace

std::unique_ptr<CardModel> load_cnn_on_card(tpurt::Device &device, const FloatCnn &net,
                                            std::size_t max_batch) {
    return std::make_unique<Bf16Cnn>(device, net, max_batch);
}

std::unique_ptr<CardModel> load_cnn_on_card(tpurt::Device &device, const Int8Cnn &net,
                                            std::size_t max_batch) {
    return std::make_unique<Int8CnnOnCard>(device, net, max_batch);
}

} // namespace tpu_infer::detail
