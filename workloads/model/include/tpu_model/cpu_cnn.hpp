// SPDX-License-Identifier: MIT
// cpu_cnn.hpp - a convolutional network trained in plain C++ on the CPU, the reference for the
// CNN trained on the card and the baseline it is timed against. Conv blocks of [3x3 convolution
// (stride 1, zero padding 1) + bias, ReLU, 2x2 max pooling at stride 2 (floor)] on NHWC images,
// then the pooled maps flattened in h, w, c order into dense layers (a CpuMlp: ReLU between,
// none after the last), softmax cross-entropy. fp32; deterministic for a given seed.
//
// A block computes relu(maxpool(conv(x)) + b), which equals maxpool(relu(conv(x) + b)) exactly
// (adding a per-channel constant and ReLU are non-decreasing, so they commute with the window's
// maximum) at a quarter of the bias and ReLU work; the card computes it in the same order. A
// window's gradient goes to its first maximum in row-major order, as the card's
// max_pool2d_grad does.
#pragma once

#include "tpu_model/checkpoint.hpp"
#include "tpu_model/cpu_mlp.hpp"
#include "tpu_model/optimizer.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tpu_model {

struct CnnShape {
    std::size_t height = 28, width = 28, channels = 1; // the input image, NHWC
    std::vector<std::size_t> filters = {16, 32};       // one conv block each
    std::vector<std::size_t> hidden = {128};           // dense layers after the flatten
    std::size_t classes = 10;

    // "cnn-<H>x<W>x<C>-c<F1>-c<F2>-d<hidden...>-<classes>", e.g. cnn-28x28x1-c16-c32-d128-10.
    std::string name() const;
    // "<H>x<W>x<C>", the checkpoint's note input.shape.
    std::string input_shape() const;
    // Height and width of block i's input (the image for i = 0) and of the flattened maps.
    std::size_t block_height(std::size_t i) const;
    std::size_t block_width(std::size_t i) const;
    std::size_t flat_size() const;
    std::size_t block_channels(std::size_t i) const { return i == 0 ? channels : filters[i - 1]; }
};

// One 3x3 convolution: w in HWIO order [3][3][in][out], b [out], and their gradients.
struct Conv3x3 {
    std::size_t in = 0, out = 0;
    std::vector<float> w, b, dw, db;
};

class CpuCnn {
  public:
    // Convolution weights He-initialised (normal, stddev sqrt(2 / (9 in))) from `seed`, the
    // dense layers as CpuMlp(seed + 1); biases zero.
    CpuCnn(const CnnShape &shape, std::uint64_t seed);

    // Logits (batch x classes) for images `x` (batch x H x W x C); keeps what backward() needs.
    const std::vector<float> &forward(const float *x, std::size_t batch);
    // Gradients of every parameter from dlogits, after forward() on the same batch.
    void backward(const std::vector<float> &dlogits);

    // Keys ".conv<i>.w", ".conv<i>.b", ".layer<j>.w", ".layer<j>.b" (optimizer.hpp).
    std::vector<Param> params();

    // Tensors conv<i>.w [3, 3, in, out], conv<i>.b [out], layer<j>.w [in, out], layer<j>.b
    // [out] (workloads/README.md, "The CPU CNN"); load checks every shape.
    void save(Checkpoint &c) const;
    void load(const Checkpoint &c);

    const CnnShape &shape() const { return shape_; }
    std::vector<Conv3x3> &convs() { return convs_; }
    const std::vector<Conv3x3> &convs() const { return convs_; }
    CpuMlp &head() { return head_; }
    const CpuMlp &head() const { return head_; }

  private:
    CnnShape shape_;
    std::vector<Conv3x3> convs_;
    CpuMlp head_;
    std::size_t batch_ = 0;
    // Per block i: its input x_[i] (x_.back() is the flattened input of the dense layers), the
    // convolution's output z_[i] before the bias, and each pooled element's source index in z_[i].
    std::vector<std::vector<float>> x_, z_;
    std::vector<std::vector<std::size_t>> argmax_;
};

} // namespace tpu_model
