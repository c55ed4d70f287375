// SPDX-License-Identifier: MIT
// cpu_cnn_test.cpp - the CPU CNN: every parameter's gradient against central finite differences
// of the loss, its checkpoint names and shapes, and real learning on scikit-learn's digits.
#include <tpu_data/batches.hpp>
#include <tpu_data/dataset.hpp>
#include <tpu_data/error.hpp>
#include <tpu_model/cpu_cnn.hpp>

#include <catch2/catch.hpp>

#include <cmath>

namespace {

float batch_loss(tpu_model::CpuCnn &net, const std::vector<float> &x, std::size_t batch,
                 const std::vector<std::uint8_t> &labels) {
    const std::vector<float> &logits = net.forward(x.data(), batch);
    return tpu_model::softmax_cross_entropy(logits, batch, net.shape().classes, labels.data()).loss;
}

} // namespace

TEST_CASE("CPU CNN gradients match central finite differences of the loss") {
    // Two blocks on 8x8x2 images (8x8 -> 4x4 -> 2x2), two dense layers.
    tpu_model::CpuCnn net({8, 8, 2, {3, 4}, {5}, 3}, 3);
    const std::size_t batch = 3;
    tpu_data::SplitMix64 rng(5);
    std::vector<float> x(batch * 8 * 8 * 2);
    for (float &v : x)
        v = float(rng.below(2001)) / 1000.0f - 1.0f;
    // Biases off zero, so that no unit sits on ReLU's kink.
    for (tpu_model::Param &p : net.params())
        if (p.key.ends_with(".b"))
            for (float &b : *p.value)
                b = float(rng.below(2001)) / 10000.0f - 0.1f;
    const std::vector<std::uint8_t> labels = {0, 2, 1};
    const std::vector<float> &logits = net.forward(x.data(), batch);
    net.backward(tpu_model::softmax_cross_entropy(logits, batch, 3, labels.data()).dlogits);

    const float h = 1e-3f;
    std::size_t checked = 0;
    for (tpu_model::Param &p : net.params()) {
        const std::vector<float> grads = *p.grad;
        std::vector<float> &values = *p.value;
        for (std::size_t e = 0; e < values.size(); ++e) {
            const float saved = values[e];
            values[e] = saved + h;
            const float up = batch_loss(net, x, batch, labels);
            values[e] = saved - h;
            const float down = batch_loss(net, x, batch, labels);
            values[e] = saved;
            const float numeric = (up - down) / (2 * h);
            INFO(p.key << "[" << e << "]: analytic " << grads[e] << ", numeric " << numeric);
            CHECK(std::abs(grads[e] - numeric) <= 2e-3f + 2e-2f * std::abs(numeric));
            ++checked;
        }
    }
    const std::size_t conv = 9 * 2 * 3 + 3 + 9 * 3 * 4 + 4, dense = 16 * 5 + 5 + 5 * 3 + 3;
    CHECK(checked == conv + dense);
}

TEST_CASE("the CPU CNN's name, checkpoint tensors and their shapes") {
    const tpu_model::CnnShape shape; // the default: Fashion-MNIST's
    CHECK(shape.name() == "cnn-28x28x1-c16-c32-d128-10");
    CHECK(shape.input_shape() == "28x28x1");
    CHECK(shape.flat_size() == 7 * 7 * 32);
    tpu_model::CpuCnn net(shape, 1);
    tpu_model::Checkpoint c;
    net.save(c);
    REQUIRE(c.find("conv0.w") != nullptr);
    CHECK(c.find("conv0.w")->shape == std::vector<std::uint32_t>{3, 3, 1, 16});
    CHECK(c.find("conv1.w")->shape == std::vector<std::uint32_t>{3, 3, 16, 32});
    CHECK(c.find("conv1.b")->shape == std::vector<std::uint32_t>{32});
    CHECK(c.find("layer0.w")->shape == std::vector<std::uint32_t>{1568, 128});
    CHECK(c.find("layer1.w")->shape == std::vector<std::uint32_t>{128, 10});
    CHECK(c.find("layer1.b")->shape == std::vector<std::uint32_t>{10});
    tpu_model::CpuCnn other(shape, 2);
    other.load(c);
    CHECK(other.convs()[1].w == net.convs()[1].w);
    CHECK(other.head().layers()[0].w == net.head().layers()[0].w);
    tpu_model::CpuCnn wider({28, 28, 1, {16, 64}, {128}, 10}, 1);
    CHECK_THROWS_AS(wider.load(c), tpu_data::DataError);
}

TEST_CASE("the CPU CNN learns digits with Adam") {
    tpu_data::Dataset all = tpu_data::load_digits(tpu_data::datasets_dir() + "/sklearn");
    tpu_data::Dataset train = tpu_data::slice(all, 0, 1500);
    tpu_data::Dataset test = tpu_data::slice(all, 1500, all.count);
    tpu_data::Normalization norm = tpu_data::compute_normalization(train);
    tpu_data::normalize(train, norm);
    tpu_data::normalize(test, norm);

    tpu_model::CpuCnn net({8, 8, 1, {8, 16}, {32}, 10}, 7);
    tpu_model::Adam opt(2e-3f);
    tpu_data::Batches batches(train, 32, 11);
    tpu_data::Batch b;
    for (int e = 0; e < 8; ++e) {
        batches.start_epoch(std::uint64_t(e));
        while (batches.next(b)) {
            const std::vector<float> &logits = net.forward(b.features.data(), b.size);
            net.backward(
                tpu_model::softmax_cross_entropy(logits, b.size, 10, b.labels.data()).dlogits);
            opt.step(net.params());
        }
    }
    const std::vector<float> &logits = net.forward(test.features.data(), test.count);
    const double accuracy =
        double(
            tpu_model::softmax_cross_entropy(logits, test.count, 10, test.labels.data()).correct) /
        double(test.count);
    INFO("test accuracy " << accuracy);
    CHECK(accuracy > 0.90);
}
