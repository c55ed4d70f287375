// SPDX-License-Identifier: MIT
// old_checkpoints_test.cpp - checkpoints written by the hand-written CPU MLP and CNN before every
// model became a graph (tests/golden/checkpoints) load into the graph of their model name, which
// writes the same tensors back, give the logits those classes computed bit for bit, on the CPU
// executor and (within fp32 rounding) on the in-process card, and training resumes from their
// optimiser state.
#include "nn_fixtures.hpp"

#include <tpu_data/batches.hpp>
#include <tpu_model/checkpoint.hpp>
#include <tpu_model/optimizer.hpp>
#include <tpu_nn/card_trainer.hpp>
#include <tpu_nn/cpu_executor.hpp>
#include <tpu_nn/spec.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

const std::string golden = TPU_GOLDEN_DIR "/checkpoints/";

void check_old_checkpoint(const std::string &stem, const std::string &model) {
    INFO(stem);
    const tpu_model::Checkpoint c = tpu_model::load_checkpoint(golden + stem + ".tpuckpt");
    REQUIRE(c.model == model);
    tpu_nn::CpuExecutor net(tpu_nn::graph_from_spec(c.model), 99); // other weights, overwritten
    net.load(c);
    // The graph writes the tensors the hand-written class wrote, in its order.
    tpu_model::Checkpoint mine;
    net.save(mine);
    for (std::size_t i = 0; i < mine.tensors.size(); ++i) {
        CHECK(mine.tensors[i].name == c.tensors.at(i).name);
        CHECK(mine.tensors[i].shape == c.tensors.at(i).shape);
        CHECK(mine.tensors[i].data == c.tensors.at(i).data);
    }
    const std::vector<float> probe = tpu_test::normals(8 * 64, 12),
                             want = tpu_test::recorded_logits(golden + stem + ".logits");
    CHECK(net.forward(probe.data(), 8) == want);

    // On the card in fp32 (other sums' orders): the same logits to rounding.
    tpurt::Device dev = tpurt::Device::open_in_process({.threads = 1});
    tpu_train::OptimizerConfig opt;
    opt.kind = tpu_train::OptimizerKind::Adam;
    tpu_nn::CardTrainer card(dev, net, opt);
    card.load_optimizer(c);
    const std::vector<float> on_card = card.logits(probe.data(), 8);
    for (std::size_t i = 0; i < want.size(); ++i)
        CHECK(std::abs(on_card[i] - want[i]) <= 1e-5f * (1.0f + std::abs(want[i])));

    // Adam resumes from the checkpoint's state (its step count included) on both.
    tpu_model::Adam cpu_opt(0.01f);
    cpu_opt.load(c, net.params());
    const std::vector<float> x = tpu_test::normals(32 * 64, 11);
    std::vector<std::uint8_t> labels;
    for (std::size_t i = 0; i < 32; ++i)
        labels.push_back(std::uint8_t(i * 7 % 10));
    net.forward(x.data(), 32);
    net.backward(net.loss(labels.data()).dlogits);
    CHECK_NOTHROW(cpu_opt.step(net.params()));
    CHECK(card.steps() == c.step);
    CHECK(std::isfinite(card.step(x.data(), labels.data(), 32).loss));
    CHECK(card.steps() == c.step + 1);
}

} // namespace

TEST_CASE("checkpoints of the hand-written CPU CNN and MLP load into their graphs, same logits") {
    check_old_checkpoint("cpu-cnn", "cnn-8x8x1-c4-c8-d16-10");
    check_old_checkpoint("cpu-mlp", "mlp-64-24-10");
}
