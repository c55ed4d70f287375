// SPDX-License-Identifier: MIT
// spec_models_test.cpp - models defined only by spec strings (spec_models.hpp) compiled from
// their checkpoints in the process, as tpu-serve, tpu-eval and tpu-quantise compile them
// (tpu_export::compile_checkpoint), on the in-process card: in bf16 close to tpu_nn's fp32 CPU
// executor with its labels; in int8 (calibrated on training images, as tpu-quantise does) with
// most of its labels; served over tpu-serve's HTTP server with the compiled model's logits bit
// for bit (any spec compiles so; the tools take this route for those tpu_infer does not read:
// layer norms, residuals, other activations and poolings, groups).
#include "served_logits.hpp"
#include "spec_models.hpp"

#include <tpu_export/compile_checkpoint.hpp>
#include <tpu_infer/card_model.hpp>
#include <tpu_infer/network.hpp>
#include <tpu_serve/graph_model.hpp>
#include <tpumodel/card_executor.hpp>

#include <tpurt/device.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>

using namespace compiler_test;

namespace {

constexpr std::size_t images = 256, classes = 10, batch = 32;

std::size_t same_labels(const std::vector<float> &a, const std::vector<float> &b) {
    REQUIRE(a.size() == b.size());
    std::size_t same = 0;
    for (std::size_t r = 0; r < a.size() / classes; ++r) {
        const auto label = [&](const std::vector<float> &l) {
            return std::max_element(l.begin() + std::ptrdiff_t(r * classes),
                                    l.begin() + std::ptrdiff_t((r + 1) * classes)) -
                   l.begin();
        };
        same += label(a) == label(b);
    }
    return same;
}

// The compiled model's logits of the first `images` test digits on the in-process card.
std::vector<float> card_logits(const tpumodel::Model &m) {
    tpurt::Device dev = tpurt::Device::open_in_process({});
    tpumodel::card::Executor exe(dev, m);
    const tpu_serve::GraphRunner runner(
        m, [&](const std::vector<tpumodel::Tensor> &in) { return exe.run(in); });
    return runner.run(digits().test.features.data(), images);
}

} // namespace

TEST_CASE("model specs compiled from their checkpoints run on the card as tpu_nn computes them",
          "[spec-models]") {
    for (const std::string &spec : digit_specs()) {
        INFO(spec);
        SpecModel model = trained_spec_model(spec);
        const std::vector<float> fp32 = model.logits(images);

        const tpumodel::Model bf16 = tpu_export::compile_checkpoint(
            model.saved, "spec.ckpt",
            {.precision = tpumodel::Precision::Bf16, .batch = batch, .calibration = {}});
        const std::vector<float> card = card_logits(bf16);
        float scale = 0, worst = 0;
        for (std::size_t i = 0; i < fp32.size(); ++i) {
            scale = std::max(scale, std::fabs(fp32[i]));
            worst = std::max(worst, std::fabs(card[i] - fp32[i]));
        }
        const std::size_t same = same_labels(card, fp32);
        INFO("bf16: largest difference " << worst << " of logits up to " << scale << "; " << same
                                         << " of " << images << " labels agree");
        CHECK(worst <= 0.03f * scale);
        CHECK(same >= images * 97 / 100);

        const Digits &d = digits();
        const std::vector<float> calibration(d.train.features.begin(),
                                             d.train.features.begin() + 200 * 64);
        const tpumodel::Model int8 = tpu_export::compile_checkpoint(
            model.saved, "spec.ckpt",
            {.precision = tpumodel::Precision::Int8, .batch = batch, .calibration = calibration});
        const std::size_t same_int8 = same_labels(card_logits(int8), fp32);
        INFO("int8: " << same_int8 << " of " << images << " labels agree");
        CHECK(same_int8 >= images * 90 / 100);
    }
}

TEST_CASE("tpu-serve answers a model spec's checkpoint with its compiled model's logits",
          "[spec-models]") {
    const SpecModel model = trained_spec_model(digit_specs()[2]); // the residual net
    const tpumodel::Model m = tpu_export::compile_checkpoint(
        model.saved, "spec.ckpt",
        {.precision = tpumodel::Precision::Bf16, .batch = serve_batch, .calibration = {}});
    const std::vector<float> direct = card_logits(m);

    tpurt::Device dev = tpurt::Device::open_in_process({});
    tpumodel::card::Executor exe(dev, m);
    const tpu_serve::GraphRunner runner(
        m, [&](const std::vector<tpumodel::Tensor> &in) { return exe.run(in); });
    const tpu_serve::ModelSignature sig = tpu_serve::graph_signature(m, model.saved.model);
    CHECK(sig.input_dims == std::vector<std::size_t>{1, 8, 8});
    const std::vector<float> served = served_logits(
        sig, [&](const float *x, std::size_t rows) { return runner.run(x, rows); },
        digits().test.features.data(), images, sig.input_dims);
    REQUIRE(served.size() == direct.size());
    std::size_t differ = 0;
    for (std::size_t i = 0; i < served.size(); ++i)
        differ +=
            std::bit_cast<std::uint32_t>(served[i]) != std::bit_cast<std::uint32_t>(direct[i]);
    CHECK(differ == 0);
}

TEST_CASE("specs of layers the CPU model of the card has stay tpu_infer's, others are compiled",
          "[spec-models]") {
    tpu_model::Checkpoint c;
    for (const char *native :
         {"mlp-784-256-128-10", "cnn-28x28x1-c16-c32-d128-10", "cnn-28x28x1-c16-c32-c64-d128-10",
          "cnn-8x8x1-c8k3-d16-10", "cnn-28x28x1-c16k5-c32k5-d128-10", "cnn-28x28x1-c16s2-10",
          "cnn-28x28x1-conv16-max3s2p1-relu-10", "not a spec"}) {
        c.model = native;
        CHECK(tpu_infer::reads_checkpoint(c));
    }
    for (const char *spec :
         {"cnn-28x28x1-c16-res-res-d64-10", "cnn-28x28x1-c16-c16g2-10", "cnn-28x28x1-c16-gelu-10",
          "cnn-28x28x1-c16-ln-10", "cnn-28x28x1-c16-avg2-10"}) {
        c.model = spec;
        CHECK_FALSE(tpu_infer::reads_checkpoint(c));
    }
    c.notes["quantisation"] = "int8-symmetric-per-channel-v1"; // tpu-quantise's, of either
    CHECK(tpu_infer::reads_checkpoint(c));
}

TEST_CASE("the MLP, the CNN and 5x5 kernels compiled from their checkpoints give tpu_infer's "
          "logits bit for bit",
          "[spec-models]") {
    // Two routes to the same arithmetic: the compiled model and tpu_infer's graph on the card.
    for (const char *spec :
         {"mlp-64-32-16-10", "cnn-8x8x1-c8-c16-d32-10", "cnn-8x8x1-c8k5-c16k5-d32-10"}) {
        INFO(spec);
        const SpecModel model = trained_spec_model(spec);
        REQUIRE(tpu_infer::reads_checkpoint(model.saved));
        const tpumodel::Model m = tpu_export::compile_checkpoint(
            model.saved, "legacy.ckpt",
            {.precision = tpumodel::Precision::Bf16, .batch = batch, .calibration = {}});
        const tpu_infer::Network net = tpu_infer::network_from_checkpoint(model.saved, "legacy");
        tpurt::Device dev = tpurt::Device::open_in_process({});
        const std::vector<float> native =
            tpu_infer::load_on_card(dev, net, 256)->logits(digits().test.features.data(), images);
        const std::vector<float> compiled = card_logits(m);
        REQUIRE(compiled.size() == native.size());
        std::size_t differ = 0;
        for (std::size_t i = 0; i < native.size(); ++i)
            differ += std::bit_cast<std::uint32_t>(native[i]) !=
                      std::bit_cast<std::uint32_t>(compiled[i]);
        CHECK(differ == 0);
    }
}
