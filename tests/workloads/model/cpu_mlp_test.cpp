// SPDX-License-Identifier: MIT
// cpu_mlp_test.cpp - the CPU MLP: its gradients against central finite differences of the loss,
// and real learning on scikit-learn's digits with SGD-momentum and with Adam.
#include <tpu_data/batches.hpp>
#include <tpu_data/dataset.hpp>
#include <tpu_model/cpu_mlp.hpp>

#include <catch2/catch.hpp>

#include <cmath>

namespace {

float batch_loss(tpu_model::CpuMlp &net, const std::vector<float> &x, std::size_t batch,
                 const std::vector<std::uint8_t> &labels) {
    const std::vector<float> &logits = net.forward(x.data(), batch);
    return tpu_model::softmax_cross_entropy(logits, batch, 3, labels.data()).loss;
}

// Test accuracy after `epochs` of training on the first 1,500 digits, tested on the other 297.
template <typename Optimizer> double digits_accuracy(Optimizer opt, int epochs) {
    tpu_data::Dataset all = tpu_data::load_digits(tpu_data::datasets_dir() + "/sklearn");
    tpu_data::Dataset train = tpu_data::slice(all, 0, 1500);
    tpu_data::Dataset test = tpu_data::slice(all, 1500, all.count);
    tpu_data::Normalization norm = tpu_data::compute_normalization(train);
    tpu_data::normalize(train, norm);
    tpu_data::normalize(test, norm);

    tpu_model::CpuMlp net({64, 128, 10}, 7);
    tpu_data::Batches batches(train, 32, 11);
    tpu_data::Batch b;
    for (int e = 0; e < epochs; ++e) {
        batches.start_epoch(std::uint64_t(e));
        while (batches.next(b)) {
            const std::vector<float> &logits = net.forward(b.features.data(), b.size);
            tpu_model::LossResult r =
                tpu_model::softmax_cross_entropy(logits, b.size, 10, b.labels.data());
            net.backward(r.dlogits);
            opt.step(net.params());
        }
    }
    const std::vector<float> &logits = net.forward(test.features.data(), test.count);
    return double(tpu_model::softmax_cross_entropy(logits, test.count, 10, test.labels.data())
                      .correct) /
           double(test.count);
}

} // namespace

TEST_CASE("CPU MLP gradients match central finite differences of the loss") {
    tpu_model::CpuMlp net({6, 5, 4, 3}, 3);
    const std::size_t batch = 4;
    tpu_data::SplitMix64 rng(5);
    std::vector<float> x(batch * 6);
    for (float &v : x)
        v = float(rng.below(2001)) / 1000.0f - 1.0f;
    // Biases start at zero, which would put units exactly on ReLU's kink (a sample whose
    // inputs to a layer are all zero); move them off it.
    for (tpu_model::Dense &l : net.layers())
        for (float &b : l.b)
            b = float(rng.below(2001)) / 10000.0f - 0.1f;
    const std::vector<std::uint8_t> labels = {0, 2, 1, 2};
    const std::vector<float> &logits = net.forward(x.data(), batch);
    net.backward(tpu_model::softmax_cross_entropy(logits, batch, 3, labels.data()).dlogits);

    const float h = 1e-3f;
    std::size_t checked = 0;
    for (tpu_model::Dense &l : net.layers()) {
        const std::vector<float> dw = l.dw, db = l.db;
        auto check = [&](std::vector<float> &params, const std::vector<float> &grads) {
            for (std::size_t e = 0; e < params.size(); ++e) {
                const float saved = params[e];
                params[e] = saved + h;
                const float up = batch_loss(net, x, batch, labels);
                params[e] = saved - h;
                const float down = batch_loss(net, x, batch, labels);
                params[e] = saved;
                const float numeric = (up - down) / (2 * h);
                INFO("parameter " << e << ": analytic " << grads[e] << ", numeric " << numeric);
                CHECK(std::abs(grads[e] - numeric) <= 2e-3f + 2e-2f * std::abs(numeric));
                ++checked;
            }
        };
        check(l.w, dw);
        check(l.b, db);
    }
    CHECK(checked == 6 * 5 + 5 + 5 * 4 + 4 + 4 * 3 + 3);
}

TEST_CASE("the CPU MLP learns digits with SGD-momentum and with Adam") {
    const double sgd = digits_accuracy(tpu_model::SgdMomentum(0.01f, 0.9f), 20);
    const double adam = digits_accuracy(tpu_model::Adam(1e-3f), 20);
    INFO("test accuracy: SGD-momentum " << sgd << ", Adam " << adam);
    CHECK(sgd > 0.90);
    CHECK(adam > 0.90);
}
