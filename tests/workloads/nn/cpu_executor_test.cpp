// SPDX-License-Identifier: MIT
// cpu_executor_test.cpp - the graph executor on the CPU (tpu_nn/cpu_executor.hpp): gradients by
// the ops' vector-Jacobian rules against central finite differences of the loss for models
// written only as specs (a 5x5-kernel CNN, a three-block CNN, a residual net with layer norm,
// and one net of every other op: strides, groups, padded pooling of both kinds, every
// activation); an optimiser steps the graph's parameters (old checkpoints:
// old_checkpoints_test.cpp).
#include <tpu_data/batches.hpp>
#include <tpu_nn/cpu_executor.hpp>
#include <tpu_nn/params.hpp>
#include <tpu_nn/spec.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace {

std::vector<float> uniform(std::size_t n, std::uint64_t seed, float lo, float hi) {
    tpu_data::SplitMix64 rng(seed);
    std::vector<float> v(n);
    for (float &x : v)
        x = lo + (hi - lo) * float(rng.below(100001)) / 100000.0f;
    return v;
}

float batch_loss(tpu_nn::CpuExecutor &net, const std::vector<float> &x, std::size_t batch,
                 const std::vector<std::uint8_t> &labels) {
    net.forward(x.data(), batch);
    return net.loss(labels.data()).loss;
}

// Checks up to `per_param` elements of each parameter (evenly spread, first and last included)
// against central differences; returns the largest error relative to the parameter's largest
// gradient. An element whose loss has a kink within +-h (a ReLU input or a pooling window's
// tie crossing: the one-sided slopes differ) has no derivative there to compare; such elements
// are counted and skipped, and may be at most 3% of those checked.
double check_gradients(const std::string &spec, std::size_t per_param) {
    tpu_nn::CpuExecutor net(tpu_nn::graph_from_spec(spec), 7);
    const std::size_t batch = 3;
    const std::size_t features = tpu_nn::elements(net.graph().node(0).shape);
    const std::vector<float> x = uniform(batch * features, 5, -1.0f, 1.0f);
    // Biases and shifts off zero, so that no unit sits on ReLU's kink.
    for (std::size_t i = 0; i < net.values().size(); ++i)
        if (net.graph().params()[i].init == tpu_nn::Init::Zeros)
            net.values()[i] = uniform(net.values()[i].size(), 11 + i, -0.1f, 0.1f);
    std::vector<std::uint8_t> labels;
    for (std::size_t i = 0; i < batch; ++i)
        labels.push_back(std::uint8_t((3 * i + 1) % net.classes()));
    net.forward(x.data(), batch);
    net.backward(net.loss(labels.data()).dlogits);

    const float h = 1e-3f;
    double worst = 0.0;
    std::size_t checked = 0, kinks = 0;
    for (std::size_t p = 0; p < net.values().size(); ++p) {
        const std::vector<float> grads = net.grads()[p];
        std::vector<float> &values = net.values()[p];
        const std::size_t n = values.size(), count = std::min(n, per_param);
        float largest = 1e-6f;
        for (float g : grads)
            largest = std::max(largest, std::abs(g));
        for (std::size_t k = 0; k < count; ++k) {
            const std::size_t e = count == 1 ? 0 : k * (n - 1) / (count - 1);
            const float saved = values[e];
            values[e] = saved + h;
            const float up = batch_loss(net, x, batch, labels);
            values[e] = saved - h;
            const float down = batch_loss(net, x, batch, labels);
            values[e] = saved;
            const float mid = batch_loss(net, x, batch, labels);
            const float numeric = (up - down) / (2 * h);
            const float right = (up - mid) / h, left = (mid - down) / h;
            if (std::abs(right - left) > 5e-3f + 0.05f * std::abs(numeric)) {
                ++kinks;
                continue;
            }
            INFO(spec << " " << net.graph().params()[p].name << "[" << e << "]: analytic "
                      << grads[e] << ", numeric " << numeric);
            CHECK(std::abs(grads[e] - numeric) <= 2e-3f + 2e-2f * std::abs(numeric));
            worst = std::max(worst, double(std::abs(grads[e] - numeric)) / largest);
            ++checked;
        }
    }
    std::printf("finite differences: %s: %zu elements, largest error %.2e of the parameter's "
                "largest gradient, %zu at a kink skipped\n",
                spec.c_str(), checked, worst, kinks);
    CHECK(kinks * 33 <= checked);
    return worst;
}

} // namespace

TEST_CASE("graph gradients match central finite differences for spec-only models") {
    CHECK(check_gradients("cnn-8x8x2-c4k5-c6k5-d12-10", 64) < 0.05);  // 5x5 kernels
    CHECK(check_gradients("cnn-8x8x2-c4-c6-c8-d10-10", 64) < 0.05);   // three blocks
    CHECK(check_gradients("cnn-8x8x2-c6-res-res-d12-10", 48) < 0.05); // residual, ln
    CHECK(check_gradients("cnn-8x8x2-conv4s2g2-tanh-avg3s1p1-conv6k1-gelu-max3s2p1-flat-ln-"
                          "sigmoid-d8-10",
                          64) < 0.05); // every other op
}

TEST_CASE("Adam steps a spec model's parameters and lowers its loss") {
    tpu_nn::CpuExecutor net(tpu_nn::graph_from_spec("cnn-8x8x1-c4-res-d16-4"), 2);
    const std::size_t batch = 16;
    const std::vector<float> x = uniform(batch * 64, 3, 0.0f, 1.0f);
    std::vector<std::uint8_t> labels;
    for (std::size_t i = 0; i < batch; ++i)
        labels.push_back(std::uint8_t(i % 4));
    tpu_model::Adam adam(0.01f);
    const std::vector<tpu_model::Param> params = net.params();
    float first = 0.0f, last = 0.0f;
    for (int step = 0; step < 40; ++step) {
        net.forward(x.data(), batch);
        const tpu_model::LossResult r = net.loss(labels.data());
        (step == 0 ? first : last) = r.loss;
        net.backward(r.dlogits);
        adam.step(params);
    }
    CHECK(last < 0.5f * first);
    std::vector<std::uint8_t> bad(batch, 4);
    CHECK_THROWS_WITH(net.loss(bad.data()), Catch::Matchers::Contains("label 4 of row 0 is not "
                                                                      "below the 4 classes"));
}
