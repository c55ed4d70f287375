// SPDX-License-Identifier: MIT
// data_parallel_test.cpp - tpu-train's data-parallel step
// (workloads/train/parallel/data_parallel.hpp) on in-process cards joined by a fabric: a small CNN
// trained a few steps on 2 cards (a ring) and on 4 (a 2 x 2 torus) keeps its replicas bit-identical
// and follows the one-card run (the gradients of the first step within fp32 rounding, the losses
// within 1e-5 relative), batches that split unevenly included; a replica changed behind the
// trainer's back is caught. One rank a thread (a RankGroup each, tpu-train-mpi's set-up) trains bit
// for bit as one process does.
#include <data_parallel.hpp>

#include <rank_group.hpp>
#include <tpu_data/batches.hpp>
#include <tpu_nn/card_trainer.hpp>
#include <tpu_nn/spec.hpp>
#include <tpurt/tpurt.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <random>
#include <span>
#include <thread>
#include <vector>

namespace {

using tpu_train::DataParallel;

const std::string cnn = "cnn-8x8x1-c4-c8-d16-10";
constexpr std::size_t features = 8 * 8;
const tpurt::InProcessConfig one_thread{.threads = 1};

// `rows` random images and labels (a fixed seed per call site).
struct Data {
    std::vector<float> x;
    std::vector<std::uint8_t> labels;
};
Data random_batches(std::size_t rows, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> pixel(0.0f, 1.0f);
    Data d;
    for (std::size_t i = 0; i < rows * features; ++i)
        d.x.push_back(pixel(rng));
    for (std::size_t i = 0; i < rows; ++i)
        d.labels.push_back(static_cast<std::uint8_t>(rng() % 10));
    return d;
}

// What a run of a few steps ends with: each step's loss, the first step's gradients (rank 0's:
// all-reduced on several cards) and the final weights.
struct Run {
    std::vector<double> losses;
    std::vector<std::vector<float>> first_gradients;
    std::vector<float> weights;
};

tpu_train::OptimizerConfig adam() {
    tpu_train::OptimizerConfig opt;
    opt.kind = tpu_train::OptimizerKind::Adam;
    opt.lr = 0.01f;
    return opt;
}

// The steps of `batches` (rows taken one after the other from `data`) on `dp`: each step's
// loss, the first step's gradients, the weights at the end.
Run steps(DataParallel &dp, const Data &data, const std::vector<std::size_t> &batches) {
    Run run;
    std::size_t at = 0;
    for (const std::size_t batch : batches) {
        const tpu_train::StepResult r =
            dp.step(data.x.data() + at * features, data.labels.data() + at, batch, features);
        run.losses.push_back(r.loss);
        if (run.first_gradients.empty())
            run.first_gradients = dp.card(0).gradients();
        dp.check_replicas();
        at += batch;
    }
    run.weights = dp.card(0).params().flat().w.to_vector<float>();
    return run;
}

// Steps of the batch sizes `batches` on `devices` driven by this process, Adam, fp32.
Run train(std::vector<tpurt::Device> devices, const Data &data,
          const std::vector<std::size_t> &batches) {
    const tpu_nn::CpuExecutor net(tpu_nn::graph_from_spec(cnn), 7);
    DataParallel dp(std::move(devices), net, adam(), tpu_train::Precision::Fp32);
    const Run run = steps(dp, data, batches);
    const tpu_train::ModelledSteps &m = dp.modelled();
    CHECK(m.steps == batches.size());
    CHECK(m.compute_cycles > 0);
    CHECK(m.compute_cycles <= m.step_cycles);
    if (dp.size() > 1)
        CHECK(m.compute_cycles < m.step_cycles); // the all-reduce took card time
    else
        CHECK(m.compute_cycles == m.step_cycles);
    return run;
}

float largest_magnitude(const std::vector<float> &v) {
    float m = 0.0f;
    for (const float x : v)
        m = std::max(m, std::fabs(x));
    return m;
}

void check_follows(const Run &many, const Run &one) {
    REQUIRE(many.losses.size() == one.losses.size());
    for (std::size_t s = 0; s < one.losses.size(); ++s) {
        INFO("step " << s);
        CHECK(std::fabs(many.losses[s] - one.losses[s]) <= 1e-5 * std::fabs(one.losses[s]));
    }
    REQUIRE(many.first_gradients.size() == one.first_gradients.size());
    for (std::size_t p = 0; p < one.first_gradients.size(); ++p) {
        const std::vector<float> &a = many.first_gradients[p], &b = one.first_gradients[p];
        REQUIRE(a.size() == b.size());
        const float scale = largest_magnitude(b);
        INFO("parameter " << p << ", largest gradient " << scale);
        REQUIRE(scale > 0.0f);
        for (std::size_t i = 0; i < a.size(); ++i)
            REQUIRE(std::fabs(a[i] - b[i]) <= 1e-5f * scale);
    }
    const float scale = largest_magnitude(one.weights);
    for (std::size_t i = 0; i < one.weights.size(); ++i)
        REQUIRE(std::fabs(many.weights[i] - one.weights[i]) <= 1e-4f * scale);
}

} // namespace

TEST_CASE("a data-parallel CNN step on 2 and 4 in-process cards follows the one-card step",
          "[data-parallel][in-process]") {
    // The last batch splits unevenly over 4 cards (3, 3, 2, 2 rows).
    const std::vector<std::size_t> batches = {16, 16, 16, 10};
    const Data data = random_batches(58, 11);
    const Run one = train({tpurt::Device::open_in_process(one_thread)}, data, batches);
    SECTION("2 cards on a ring") {
        check_follows(
            train(tpurt::Device::open_in_process_fabric({.dim_x = 2}, one_thread), data, batches),
            one);
    }
    SECTION("4 cards on a 2 x 2 torus") {
        check_follows(train(tpurt::Device::open_in_process_fabric(
                                {.torus = true, .dim_x = 2, .dim_y = 2}, one_thread),
                            data, batches),
                      one);
    }
}

// The same on `devices` (every card of a fabric) with a rank a thread, each its own RankGroup
// over a communicator made by init_rank as tpu-train-mpi's processes make it: per rank, its run.
std::vector<Run> train_ranks(std::vector<tpurt::Device> devices, const Data &data,
                             const std::vector<std::size_t> &batches) {
    const tpurt::CommId id = tpurt::CommId::make();
    const auto n = static_cast<std::uint32_t>(devices.size());
    std::vector<tpu_train::RankCard> cards(n);
    for (const tpurt::Device &d : devices)
        cards.at(tpurt::Communicator::fabric_rank(d.info())) = {d.info().ici.x, d.info().ici.y,
                                                                "host"};
    std::vector<Run> runs(n);
    std::vector<std::exception_ptr> errors(n);
    std::vector<std::thread> threads;
    for (tpurt::Device &d : devices)
        threads.emplace_back([&, d]() mutable {
            const std::uint32_t rank = tpurt::Communicator::fabric_rank(d.info());
            try {
                tpu_train::RankGroup group(d, tpurt::Communicator::init_rank(d, n, id, rank),
                                           cards);
                const tpu_nn::CpuExecutor net(tpu_nn::graph_from_spec(cnn), 7);
                DataParallel dp(group, net, adam(), tpu_train::Precision::Fp32);
                runs[rank] = steps(dp, data, batches);
            } catch (...) {
                errors[rank] = std::current_exception();
            }
        });
    for (std::thread &t : threads)
        t.join();
    for (const std::exception_ptr &e : errors)
        if (e)
            std::rethrow_exception(e);
    return runs;
}

bool same_bits(const std::vector<float> &a, const std::vector<float> &b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST_CASE("a rank a thread trains bit for bit as one process driving the 4 cards",
          "[data-parallel][in-process]") {
    const std::vector<std::size_t> batches = {16, 16, 16, 10};
    const Data data = random_batches(58, 11);
    const tpurt::FabricConfig torus{.torus = true, .dim_x = 2, .dim_y = 2};
    const Run one = train(tpurt::Device::open_in_process_fabric(torus, one_thread), data, batches);
    const std::vector<Run> ranks =
        train_ranks(tpurt::Device::open_in_process_fabric(torus, one_thread), data, batches);
    for (std::size_t r = 0; r < ranks.size(); ++r) {
        INFO("rank " << r);
        CHECK(ranks[r].losses == one.losses);
        CHECK(same_bits(ranks[r].weights, one.weights));
    }
}

TEST_CASE("a data-parallel replica that differs is caught", "[data-parallel][in-process]") {
    const Data data = random_batches(8, 3);
    const tpu_nn::CpuExecutor net(tpu_nn::graph_from_spec(cnn), 7);
    DataParallel dp(tpurt::Device::open_in_process_fabric({.dim_x = 2}, one_thread), net, {},
                    tpu_train::Precision::Fp32);
    dp.step(data.x.data(), data.labels.data(), 8, features);
    dp.check_replicas();
    // One bit of one weight of card 1's second block changes.
    tpurt::Tensor w = dp.card(1).params()[2].w;
    std::vector<float> values = w.to_vector<float>();
    values[5] = std::nextafter(values[5], 1.0f);
    w.copy_from_host(values);
    CHECK_THROWS_WITH(dp.check_replicas(),
                      Catch::Contains("card 1's weights differ from card 0's at element 5 of "
                                      ".conv1.w"));
    CHECK_THROWS_AS(dp.step(data.x.data(), data.labels.data(), 1, features), std::invalid_argument);
}
