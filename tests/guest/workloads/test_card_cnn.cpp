// SPDX-License-Identifier: MIT
// test_card_cnn.cpp - guest test of training the CNN on the card (its graph, tpu_nn::CardTrainer):
// one step's loss and every parameter's gradient against the CPU executor's (whose gradients the
// host tests check against finite differences) for the same weights and batch, in fp32 and in bf16
// precision, short trainings on the digits in which the test loss falls and the accuracy rises, a
// checkpoint saved, loaded and resumed bit for bit, and a profiled step whose trace holds every op
// of the step. Needs the data sets (run-in-vm.sh --datasets).
#include <train_common.hpp>

#include <tpu_data/batches.hpp>
#include <tpu_nn/card_trainer.hpp>
#include <tpu_nn/spec.hpp>

#include "runtime_helpers.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace {

using guest_test::device;

struct Digits {
    tpu_data::Dataset train, test;
    Digits() {
        tpu_train::Options o;
        o.data = "digits";
        tpu_train::load_data(o, train, test);
    }
};

const Digits &digits() {
    static const Digits d;
    return d;
}

// The digits' 8x8x1 images, two small conv blocks (8x8 -> 4x4 -> 2x2), a hidden dense layer,
// as a graph from `seed`.
const std::string digits_cnn = "cnn-8x8x1-c8-c16-d32-10";
tpu_nn::CpuExecutor digits_graph(std::uint64_t seed) {
    return tpu_nn::CpuExecutor(tpu_nn::graph_from_spec(digits_cnn), seed);
}

// The largest |a - b| over the largest |b|.
double relative_error(const std::vector<float> &a, const std::vector<float> &b) {
    REQUIRE(a.size() == b.size());
    double diff = 0, top = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        diff = std::max(diff, std::fabs(double(a[i]) - double(b[i])));
        top = std::max(top, std::fabs(double(b[i])));
    }
    REQUIRE(top > 0);
    return diff / top;
}

void train_epochs(tpu_nn::CardTrainer &card, std::size_t first, std::size_t last) {
    tpu_data::Batches batches(digits().train, 32, 7);
    tpu_data::Batch b;
    for (std::size_t epoch = first; epoch < last; ++epoch) {
        batches.start_epoch(epoch);
        while (batches.next(b))
            card.step(b.features.data(), b.labels.data(), b.size);
    }
}

// Steps first..last - 1 of the first epoch.
void train_steps(tpu_nn::CardTrainer &card, std::size_t first, std::size_t last) {
    tpu_data::Batches batches(digits().train, 32, 7);
    tpu_data::Batch b;
    batches.start_epoch(0);
    for (std::size_t step = 0; step < last && batches.next(b); ++step)
        if (step >= first)
            card.step(b.features.data(), b.labels.data(), b.size);
}

std::pair<double, double> card_test(tpu_nn::CardTrainer &card) {
    return tpu_train::evaluate(
        [&card](const float *x, std::size_t batch) { return card.logits(x, batch); }, digits().test,
        nullptr);
}

// One step of the digits CNN on the card in `precision` against the CPU executor's fp32 step: the
// loss to `loss_eps` relative, every gradient to `grad_tol` of its largest element.
void check_one_step(tpu_train::Precision precision, double loss_eps, double grad_tol) {
    const Digits &d = digits();
    tpu_nn::CpuExecutor cpu = digits_graph(3);
    tpu_nn::CardTrainer card(device(), digits_graph(3), {}, precision);
    tpu_data::Batches batches(d.train, 40, 3);
    tpu_data::Batch b;
    REQUIRE(batches.next(b));

    const std::vector<float> &logits = cpu.forward(b.features.data(), b.size);
    const tpu_model::LossResult ref =
        tpu_model::softmax_cross_entropy(logits, b.size, d.train.classes(), b.labels.data());
    cpu.backward(ref.dlogits);
    const tpu_train::StepResult got =
        card.forward_backward(b.features.data(), b.labels.data(), b.size);
    CHECK(got.loss == Approx(ref.loss).epsilon(loss_eps));
    if (precision == tpu_train::Precision::Fp32) // bf16 may flip a near tie
        CHECK(got.correct == ref.correct);
    const std::vector<std::vector<float>> grads = card.gradients();
    const std::vector<tpu_model::Param> params = cpu.params();
    REQUIRE(grads.size() == params.size());
    for (std::size_t i = 0; i < params.size(); ++i) {
        INFO("parameter " << params[i].key);
        CHECK(relative_error(grads[i], *params[i].grad) < grad_tol);
    }
}

// Three epochs of Adam on the digits in `precision`: an untrained net guesses (about 10 %, loss
// over 2.3); three epochs reach about 83 % (measured; more epochs go over 90 %, the host test's).
void check_adam_training(tpu_train::Precision precision) {
    const tpu_nn::CpuExecutor net = digits_graph(7);
    tpu_train::OptimizerConfig opt;
    opt.kind = tpu_train::OptimizerKind::Adam;
    opt.lr = 3e-3f;
    tpu_nn::CardTrainer card(device(), net, opt, precision);
    const auto before = card_test(card);
    train_epochs(card, 0, 3);
    const auto after = card_test(card);
    INFO("test loss " << before.first << " -> " << after.first << ", accuracy " << before.second
                      << " -> " << after.second);
    CHECK(after.first < 0.5 * before.first);
    CHECK(after.second > before.second + 0.5);
    CHECK(after.second > 0.75);
}

} // namespace

TEST_CASE("one CNN training step's loss and gradients on the card equal the CPU executor's") {
    // fp32 on both sides, sums in other orders.
    check_one_step(tpu_train::Precision::Fp32, 1e-4, 1e-3);
}

TEST_CASE("one bf16 CNN training step on the card is close to the CPU executor's fp32 step") {
    // bf16 inputs, weights and gradients (8 significant bits, fp32 sums); an error in an op's
    // indexing or dtype handling would be of the order of the gradient itself.
    check_one_step(tpu_train::Precision::Bf16, 2e-2, 5e-2);
}

TEST_CASE("training the CNN on the card with Adam: test loss falls, accuracy rises") {
    check_adam_training(tpu_train::Precision::Fp32);
}

TEST_CASE("training the CNN on the card in bf16 with Adam: test loss falls, accuracy rises") {
    check_adam_training(tpu_train::Precision::Bf16);
}

TEST_CASE("a CNN checkpoint saved on the card, loaded and resumed continues bit for bit") {
    for (const auto kind : {tpu_train::OptimizerKind::Sgd, tpu_train::OptimizerKind::Adam}) {
        tpu_train::OptimizerConfig opt;
        opt.kind = kind;
        opt.lr = kind == tpu_train::OptimizerKind::Adam ? 3e-3f : 0.02f;
        INFO((kind == tpu_train::OptimizerKind::Adam ? "Adam" : "SGD"));
        const tpu_nn::CpuExecutor net = digits_graph(5);
        tpu_nn::CardTrainer straight(device(), net, opt);
        train_steps(straight, 0, 8);

        tpu_nn::CardTrainer first(device(), net, opt);
        train_steps(first, 0, 4);
        tpu_nn::CpuExecutor saved = net;
        first.copy_to(saved);
        tpu_model::Checkpoint c;
        c.model = digits_cnn;
        c.step = first.steps();
        saved.save(c);
        first.save_optimizer(c);
        const std::string path = "/tmp/test-card-cnn.tpuckpt";
        tpu_model::save_checkpoint(c, path);

        const tpu_model::Checkpoint back = tpu_model::load_checkpoint(path);
        std::remove(path.c_str());
        tpu_nn::CpuExecutor loaded = digits_graph(99); // other weights, all overwritten
        loaded.load(back);
        tpu_nn::CardTrainer resumed(device(), loaded, opt);
        resumed.load_optimizer(back);
        CHECK(resumed.steps() == first.steps());
        train_steps(resumed, back.step, 8);

        tpu_nn::CpuExecutor want = net, got = net;
        straight.copy_to(want);
        resumed.copy_to(got);
        const std::vector<tpu_model::Param> w = want.params(), g = got.params();
        for (std::size_t i = 0; i < w.size(); ++i) {
            INFO("parameter " << w[i].key);
            CHECK(*g[i].value == *w[i].value);
        }
    }
}

// `steps` Adam steps of the digits CNN in bf16, captured or not: each step's loss, the weights
// and optimiser state as bits, and the card's jobs per step.
struct Steps {
    std::vector<double> losses;
    std::vector<float> state;
    std::vector<std::uint64_t> jobs;
};
Steps run_steps(bool captured, std::size_t steps) {
    const tpu_nn::CpuExecutor net = digits_graph(5);
    tpu_train::OptimizerConfig opt;
    opt.kind = tpu_train::OptimizerKind::Adam;
    opt.lr = 3e-3f;
    opt.captured = captured;
    tpu_nn::CardTrainer card(device(), net, opt, tpu_train::Precision::Bf16);
    tpu_data::Batches batches(digits().train, 32, 7);
    tpu_data::Batch b;
    batches.start_epoch(0);
    Steps r;
    for (std::size_t step = 0; step < steps && batches.next(b); ++step) {
        if (step == 3)
            card.set_lr(1e-3f);
        const std::uint64_t before = device().counters().jobs_done;
        r.losses.push_back(card.step(b.features.data(), b.labels.data(), b.size).loss);
        r.jobs.push_back(device().counters().jobs_done - before);
    }
    for (const tpurt::Tensor *t :
         {&card.params().flat().w, &card.params().flat().m, &card.params().flat().v})
        for (float f : t->to_vector<float>())
            r.state.push_back(f);
    return r;
}

TEST_CASE("captured CNN training steps on the card equal the eager steps bit for bit") {
    const Steps eager = run_steps(false, 6), captured = run_steps(true, 6);
    CHECK(captured.losses == eager.losses);
    REQUIRE(captured.state.size() == eager.state.size());
    CHECK(std::memcmp(captured.state.data(), eager.state.data(), eager.state.size() * 4) == 0);
    for (std::size_t i = 0; i < eager.jobs.size(); ++i) {
        INFO("step " << i << ": " << eager.jobs[i] << " jobs eagerly, " << captured.jobs[i]
                     << " captured");
        CHECK(captured.jobs[i] == 1);
    }
}

TEST_CASE("a profiled CNN training step records every op of the step") {
    const Digits &d = digits();
    const tpu_nn::CpuExecutor net = digits_graph(3);
    tpu_train::OptimizerConfig opt;
    opt.kind = tpu_train::OptimizerKind::Adam;
    opt.captured = false; // the ops one by one: a captured step is one op in the trace
    tpu_nn::CardTrainer card(device(), net, opt);
    tpu_data::Batches batches(d.train, 32, 3);
    tpu_data::Batch b;
    REQUIRE(batches.next(b));
    card.step(b.features.data(), b.labels.data(), b.size); // compiles outside the profile
    tpurt::profiler::clear();
    tpurt::profiler::start();
    card.step(b.features.data(), b.labels.data(), b.size);
    tpurt::profiler::stop();
    const std::string path = "/tmp/test-card-cnn-trace.json";
    tpurt::profiler::write_trace(path);
    std::FILE *f = std::fopen(path.c_str(), "rb");
    REQUIRE(f != nullptr);
    std::string text;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;)
        text.append(buf, n);
    std::fclose(f);
    std::remove(path.c_str());
    const tpurt::Profile trace = tpurt::Profile::from_trace_json(text);
    tpurt::profiler::clear();

    std::multiset<std::string> names;
    for (const tpurt::OpRecord &op : trace.ops) {
        CHECK(op.jobs > 0);
        names.insert(op.name);
    }
    std::string all;
    for (const std::string &n : std::set<std::string>(names.begin(), names.end()))
        all += n + "\n";
    INFO("ops in the trace:\n" << all);
    auto count = [&](const std::string &prefix) {
        return std::count_if(names.begin(), names.end(),
                             [&](const std::string &n) { return n.starts_with(prefix); });
    };
    // Two blocks, two dense layers, Adam: per block forward the conv2d layer (bias and relu in
    // its epilogue) and maxpool; per dense layer dense; the loss; per dense layer backward two
    // matmuls (their operands transposed first) and the bias's column sums (one launch), the
    // hidden layer's relu_grad; per block relu_grad, the bias's sum, maxpool_grad, the weight
    // gradient and, for the second, the input gradient (one executable each); one adam over
    // every parameter (card_params.hpp: one flat buffer per kind of tensor).
    const std::vector<std::pair<std::string, long>> expected = {{"conv2d ", 2},
                                                                {"maxpool ", 2},
                                                                {"dense ", 2},
                                                                {"softmax_cross_entropy ", 1},
                                                                {"matmul ", 4},
                                                                {"transpose ", 4},
                                                                {"column sum ", 4},
                                                                {"relu_grad ", 3},
                                                                {"maxpool_grad ", 2},
                                                                {"conv2d_weight_grad ", 2},
                                                                {"conv2d_input_grad ", 1},
                                                                {"adam ", 1}};
    for (const auto &[prefix, calls] : expected) {
        INFO("op " << prefix);
        CHECK(count(prefix) >= calls);
    }
}
