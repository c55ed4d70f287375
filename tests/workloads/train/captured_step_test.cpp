// SPDX-License-Identifier: MIT
// captured_step_test.cpp - tpu-train's captured training step (OptimizerConfig::captured,
// card_params.hpp's capture_step / replay_step) on the in-process card: the graphs (tpu_nn's
// CardTrainer) of a small CNN's and an MLP's names,
// fp32 and bf16, SGD-momentum and Adam, trained a few steps captured and eagerly from the same
// seed, a short last batch (a second capture) and a learning-rate change (the graph's
// parameter) included, end bit for bit alike (losses, weights, optimiser state), and a captured
// step submits one job where the eager one submits dozens.
#include <tpu_nn/card_trainer.hpp>
#include <tpu_nn/spec.hpp>
#include <tpurt/tpurt.hpp>

#include <catch2/catch.hpp>

#include <bit>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using tpu_train::OptimizerKind;
using tpu_train::Precision;

constexpr std::size_t features = 8 * 8;

struct Data {
    std::vector<float> x;
    std::vector<std::uint8_t> labels;
};

Data random_rows(std::size_t rows, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> pixel(0.0f, 1.0f);
    Data d;
    for (std::size_t i = 0; i < rows * features; ++i)
        d.x.push_back(pixel(rng));
    for (std::size_t i = 0; i < rows; ++i)
        d.labels.push_back(static_cast<std::uint8_t>(rng() % 10));
    return d;
}

// What a run ends with, as bits: each step's loss and correct count, the flat weights, the
// optimiser's state; and the card's jobs per step.
struct Run {
    std::vector<double> losses;
    std::vector<std::size_t> correct;
    std::vector<std::uint32_t> state;
    std::vector<std::uint64_t> jobs;
};

void append_bits(std::vector<std::uint32_t> &out, const tpurt::Tensor &t) {
    for (float f : t.to_vector<float>())
        out.push_back(std::bit_cast<std::uint32_t>(f));
}

Run train(const tpu_nn::CpuExecutor &net, bool captured, OptimizerKind kind, Precision precision) {
    tpurt::Device dev = tpurt::Device::open_in_process({.threads = 1});
    tpu_train::OptimizerConfig opt;
    opt.kind = kind;
    opt.lr = 0.01f;
    opt.captured = captured;
    tpu_nn::CardTrainer card(dev, net, opt, precision);
    const Data data = random_rows(8 * 4 + 5, 3);
    const std::size_t batches[] = {8, 8, 8, 8, 5}; // the last one short: its own capture
    Run run;
    std::size_t at = 0;
    for (std::size_t i = 0; i < std::size(batches); ++i) {
        if (i == 2)
            card.set_lr(0.005f);
        const std::uint64_t before = dev.counters().jobs_done;
        const tpu_train::StepResult r =
            card.step(data.x.data() + at * features, data.labels.data() + at, batches[i]);
        run.jobs.push_back(dev.counters().jobs_done - before);
        run.losses.push_back(r.loss);
        run.correct.push_back(r.correct);
        at += batches[i];
    }
    const tpu_train::CardParam &flat = card.params().flat();
    append_bits(run.state, flat.w);
    append_bits(run.state, flat.m);
    append_bits(run.state, flat.v);
    return run;
}

void check_alike(const std::string &model, std::uint64_t seed) {
    const tpu_nn::CpuExecutor net(tpu_nn::graph_from_spec(model), seed);
    for (const OptimizerKind kind : {OptimizerKind::Sgd, OptimizerKind::Adam})
        for (const Precision precision : {Precision::Fp32, Precision::Bf16}) {
            INFO((kind == OptimizerKind::Sgd ? "SGD" : "Adam")
                 << (precision == Precision::Fp32 ? " fp32" : " bf16"));
            const Run eager = train(net, false, kind, precision);
            const Run captured = train(net, true, kind, precision);
            CHECK(captured.losses == eager.losses);
            CHECK(captured.correct == eager.correct);
            CHECK(captured.state == eager.state);
            for (std::size_t i = 0; i < eager.jobs.size(); ++i) {
                INFO("step " << i << ": " << eager.jobs[i] << " jobs eagerly");
                CHECK(captured.jobs[i] == 1);
                CHECK(eager.jobs[i] > 10);
            }
        }
}

} // namespace

TEST_CASE("captured training step: the CNN's equals the eager step bit for bit in one job",
          "[train][captured]") {
    check_alike("cnn-8x8x1-c4-c8-d16-10", 7);
}

TEST_CASE("captured training step: the MLP's equals the eager step bit for bit in one job",
          "[train][captured]") {
    check_alike("mlp-64-32-16-10", 5);
}
