// SPDX-License-Identifier: MIT
// card_trainer_test.cpp - spec models trained on the in-process card (tpu_nn/card_trainer.hpp):
// one step's loss and every parameter's gradient against the CPU executor's from the same
// weights and batch (fp32 on both; the card's own sums, transcendental functions and layer
// norm: each gradient within 2e-5 of its parameter's largest, 1.4e-6 measured), a captured step
// equal bit for bit to the eager one in one job, a grouped convolution refused by name, and Adam on
// the digits lowering the loss of a residual net with layer norm.
#include <data_parallel.hpp>
#include <tpu_data/batches.hpp>
#include <tpu_data/dataset.hpp>
#include <tpu_nn/card_trainer.hpp>
#include <tpu_nn/cpu_executor.hpp>
#include <tpu_nn/spec.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace {

std::vector<float> uniform(std::size_t n, std::uint64_t seed) {
    tpu_data::SplitMix64 rng(seed);
    std::vector<float> v(n);
    for (float &x : v)
        x = float(rng.below(20001)) / 10000.0f - 1.0f;
    return v;
}

tpu_train::OptimizerConfig adam(float lr, bool captured = true) {
    tpu_train::OptimizerConfig opt;
    opt.kind = tpu_train::OptimizerKind::Adam;
    opt.lr = lr;
    opt.captured = captured;
    return opt;
}

// The largest difference between the card's and the CPU's gradients of one parameter,
// relative to the CPU's largest.
double worst_gradient(const std::string &spec) {
    tpu_nn::CpuExecutor cpu(tpu_nn::graph_from_spec(spec), 3);
    for (std::size_t i = 0; i < cpu.values().size(); ++i) // biases and shifts off zero
        if (cpu.graph().params()[i].init == tpu_nn::Init::Zeros)
            for (float &b : cpu.values()[i] = uniform(cpu.values()[i].size(), 20 + i))
                b *= 0.1f;
    const std::size_t batch = 4;
    const std::vector<float> x = uniform(batch * tpu_nn::elements(cpu.graph().node(0).shape), 9);
    const std::vector<std::uint8_t> labels = {1, 0, 7, 3};
    cpu.forward(x.data(), batch);
    const tpu_model::LossResult loss = cpu.loss(labels.data());
    cpu.backward(loss.dlogits);

    tpurt::Device dev = tpurt::Device::open_in_process({.threads = 1});
    tpu_nn::CardTrainer card(dev, cpu.graph(), cpu.values(), adam(1e-3f));
    const tpu_train::StepResult r = card.forward_backward(x.data(), labels.data(), batch);
    CHECK(std::abs(r.loss - loss.loss) <= 1e-5 * loss.loss);
    const tpu_nn::ParamValues g = card.gradients();
    double worst = 0.0;
    for (std::size_t p = 0; p < g.size(); ++p) {
        const std::vector<float> &want = cpu.grads()[p];
        float largest = 1e-6f, diff = 0.0f;
        for (std::size_t e = 0; e < want.size(); ++e) {
            largest = std::max(largest, std::abs(want[e]));
            diff = std::max(diff, std::abs(g[p][e] - want[e]));
        }
        INFO(spec << " " << cpu.graph().params()[p].name << ": largest difference " << diff
                  << ", largest gradient " << largest);
        CHECK(diff <= 2e-5f * largest);
        worst = std::max(worst, double(diff / largest));
    }
    std::printf("card vs CPU gradients: %s: largest difference %.2e of the parameter's largest\n",
                spec.c_str(), worst);
    return worst;
}

} // namespace

TEST_CASE("the card's gradients of spec models equal the CPU executor's") {
    worst_gradient("cnn-8x8x2-c4k5-c6k5-d12-10");  // 5x5 kernels
    worst_gradient("cnn-8x8x2-c4-c6-c8-d10-10");   // three blocks
    worst_gradient("cnn-8x8x2-c6-res-res-d12-10"); // residual blocks, layer norm
    worst_gradient("cnn-8x8x2-conv4s2-tanh-avg3s1p1-conv6k1-gelu-max3s2p1-flat-ln-sigmoid-d8-10");
}

TEST_CASE("a spec model's captured step equals its eager steps in one job") {
    const tpu_nn::Graph g = tpu_nn::graph_from_spec("cnn-8x8x1-c4-res-d8-10");
    const tpu_nn::ParamValues start = tpu_nn::initial_values(g, 5);
    const std::vector<float> x = uniform(3 * 6 * 64, 4);
    std::vector<std::uint8_t> labels;
    for (std::size_t i = 0; i < 18; ++i)
        labels.push_back(std::uint8_t(i % 10));
    std::vector<double> losses[2];
    tpu_nn::ParamValues ends[2];
    std::uint64_t jobs = 0;
    for (int captured = 0; captured < 2; ++captured) {
        tpurt::Device dev = tpurt::Device::open_in_process({.threads = 1});
        tpu_nn::CardTrainer card(dev, g, start, adam(1e-2f, captured == 1));
        for (std::size_t s = 0; s < 3; ++s) {
            const std::uint64_t before = dev.counters().jobs_done;
            losses[captured].push_back(
                card.step(x.data() + s * 6 * 64, labels.data() + s * 6, 6).loss);
            jobs = dev.counters().jobs_done - before;
        }
        ends[captured] = card.values();
        CHECK(card.steps() == 3);
    }
    CHECK(losses[0] == losses[1]);
    CHECK(ends[0] == ends[1]);
    CHECK(ends[0] != start);
    CHECK(jobs <= 3); // the copies in and the replay (the eager step: dozens)
}

TEST_CASE("a spec model trains data-parallel on 2 in-process cards as on one") {
    const tpu_nn::CpuExecutor net(tpu_nn::graph_from_spec("cnn-8x8x1-c4-res-d8-10"), 5);
    const std::vector<float> x = uniform(2 * 8 * 64, 6);
    std::vector<std::uint8_t> labels;
    for (std::size_t i = 0; i < 16; ++i)
        labels.push_back(std::uint8_t((7 * i) % 10));
    std::vector<double> losses[2];
    std::vector<float> weights[2];
    tpu_train::OptimizerConfig sgd;
    sgd.lr = 0.05f;
    for (std::size_t cards = 1; cards <= 2; ++cards) {
        tpu_train::DataParallel<tpu_nn::CardTrainer> dp(
            cards == 1 ? std::vector{tpurt::Device::open_in_process({.threads = 1})}
                       : tpurt::Device::open_in_process_fabric({.dim_x = 2}, {.threads = 1}),
            net, sgd, tpu_train::Precision::Fp32); // SGD: a gradient's scale shows
        for (std::size_t s = 0; s < 2; ++s) {
            losses[cards - 1].push_back(
                dp.step(x.data() + s * 8 * 64, labels.data() + s * 8, 8, 64).loss);
            dp.check_replicas();
        }
        weights[cards - 1] = dp.card(0).params().flat().w.to_vector<float>();
    }
    for (std::size_t s = 0; s < 2; ++s)
        CHECK(std::abs(losses[1][s] - losses[0][s]) <= 1e-5 * losses[0][s]);
    float largest = 0.0f, diff = 0.0f;
    for (std::size_t i = 0; i < weights[0].size(); ++i) {
        largest = std::max(largest, std::abs(weights[0][i]));
        diff = std::max(diff, std::abs(weights[1][i] - weights[0][i]));
    }
    CHECK(diff <= 1e-4f * largest);
}

TEST_CASE("the card trainer refuses what the card cannot train, naming the node") {
    tpurt::Device dev = tpurt::Device::open_in_process({.threads = 1});
    const tpu_nn::Graph g = tpu_nn::graph_from_spec("cnn-8x8x2-conv4g2-d-10");
    CHECK_THROWS_WITH(tpu_nn::CardTrainer(dev, g, tpu_nn::initial_values(g, 1), adam(1e-3f)),
                      Catch::Matchers::Contains("conv2d conv0: groups > 1 cannot be trained on "
                                                "the card"));
    CHECK_THROWS_WITH(tpu_nn::CardTrainer(dev, g, {}, adam(1e-3f)),
                      Catch::Matchers::Contains("0 parameter values for 4 parameters"));
    const tpu_nn::CpuExecutor net(tpu_nn::graph_from_spec("cnn-8x8x1-c4-d-10"), 1);
    CHECK_THROWS_WITH(tpu_nn::CardTrainer(dev, net, adam(1e-3f), tpu_train::Precision::Bf16),
                      Catch::Matchers::Contains("model cnn-8x8x1-c4-d-10: a spec model trains in "
                                                "fp32 on the card (--precision fp32)"));
}

TEST_CASE("a residual spec model with layer norm learns the digits on the card") {
    tpu_data::Dataset all = tpu_data::load_digits(tpu_data::datasets_dir() + "/sklearn");
    tpu_data::Dataset train = tpu_data::slice(all, 0, 1500);
    tpu_data::Dataset test = tpu_data::slice(all, 1500, all.count);
    const tpu_data::Normalization norm = tpu_data::compute_normalization(train);
    tpu_data::normalize(train, norm);
    tpu_data::normalize(test, norm);

    const tpu_nn::Graph g = tpu_nn::graph_from_spec("cnn-8x8x1-c8-res-d32-10");
    tpurt::Device dev = tpurt::Device::open_in_process({.threads = 1});
    tpu_nn::CardTrainer card(dev, g, tpu_nn::initial_values(g, 7), adam(2e-3f));
    tpu_data::Batches batches(train, 32, 11);
    tpu_data::Batch b;
    double first = 0.0, last = 0.0;
    std::size_t steps = 0;
    for (std::uint64_t e = 0; steps < 300; ++e) {
        batches.start_epoch(e);
        while (steps < 300 && batches.next(b)) {
            const double loss = card.step(b.features.data(), b.labels.data(), b.size).loss;
            if (steps < 10)
                first += loss / 10;
            if (steps >= 290)
                last += loss / 10;
            ++steps;
        }
    }
    const std::vector<float> logits = card.logits(test.features.data(), test.count);
    const double accuracy =
        double(
            tpu_model::softmax_cross_entropy(logits, test.count, 10, test.labels.data()).correct) /
        double(test.count);
    std::printf("digits on the card, %s, 300 steps of 32: loss %.3f -> %.3f, test accuracy "
                "%.1f%%\n",
                g.name().c_str(), first, last, 100 * accuracy);
    CHECK(last < 0.3 * first);
    CHECK(accuracy > 0.85);
}

// Not in ctest (hidden tag; about two minutes): the three spec models on Fashion-MNIST,
// 300 Adam steps of 64 each on the in-process card, then the test set.
//   build/host/tests/workloads/workloads_tests "[fashion]"
TEST_CASE("spec models learn Fashion-MNIST on the card", "[.][fashion]") {
    tpu_data::Dataset train = tpu_data::load_fashion_mnist(
        tpu_data::datasets_dir() + "/fashion-mnist", tpu_data::Split::train);
    tpu_data::Dataset test = tpu_data::load_fashion_mnist(
        tpu_data::datasets_dir() + "/fashion-mnist", tpu_data::Split::test);
    const tpu_data::Normalization norm = tpu_data::compute_normalization(train);
    tpu_data::normalize(train, norm);
    tpu_data::normalize(test, norm);
    test = tpu_data::slice(test, 0, 2000);
    for (const char *spec : {"cnn-28x28x1-c16k5-c32k5-d128-10", "cnn-28x28x1-c16-c32-c64-d128-10",
                             "cnn-28x28x1-c16-res-res-d64-10"}) {
        const tpu_nn::Graph g = tpu_nn::graph_from_spec(spec);
        tpurt::Device dev = tpurt::Device::open_in_process({});
        tpu_nn::CardTrainer card(dev, g, tpu_nn::initial_values(g, 1), adam(1e-3f));
        tpu_data::Batches batches(train, 64, 1);
        tpu_data::Batch b;
        batches.start_epoch(0);
        double first = 0.0, last = 0.0;
        const auto start = std::chrono::steady_clock::now();
        for (std::size_t step = 0; step < 300 && batches.next(b); ++step) {
            const double loss = card.step(b.features.data(), b.labels.data(), b.size).loss;
            first += step < 20 ? loss / 20 : 0.0;
            last += step >= 280 ? loss / 20 : 0.0;
        }
        const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
        std::size_t correct = 0;
        for (std::size_t at = 0; at < test.count; at += 250) {
            const std::vector<float> logits = card.logits(test.sample(at), 250);
            correct +=
                tpu_model::softmax_cross_entropy(logits, 250, 10, test.labels.data() + at).correct;
        }
        const double accuracy = double(correct) / double(test.count);
        std::printf("Fashion-MNIST on the card, %s, 300 steps of 64 in %.1f s: loss %.3f -> "
                    "%.3f, accuracy %.1f%% on 2000 test images\n",
                    spec, seconds.count(), first, last, 100 * accuracy);
        CHECK(last < 0.5 * first);
        CHECK(accuracy > 0.75);
    }
}
