// SPDX-License-Identifier: MIT
// test_graph.cpp - guest test of capture and replay (tpurt::Graph) on the card behind tpu.ko: a
// captured training-like sequence (an SGD update, a convolution layer with zero padding, max
// pooling, a dense layer, the fused cross-entropy, backward matmuls through scratch, column
// sums) replayed as one job gives the eager launches' results bit for bit, over three steps
// with new inputs and a new learning rate (the graph's parameter).
#include <tpurt/testing/graph_step.hpp>
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/tpurt.hpp>

#include "runtime_helpers.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <span>
#include <vector>

namespace {

using Step = tpurt::GraphStep;

std::uint64_t jobs_done() {
    return guest_test::device().counters().jobs_done;
}

} // namespace

TEST_CASE("a captured step on the card equals the eager launches bit for bit in one job") {
    tpurt::Device &dev = guest_test::device();
    Step eager(dev), captured(dev);
    tpurt::Stream es(dev), gs(dev);
    gs.begin_capture();
    captured.queue(gs);
    tpurt::Graph graph = gs.end_capture("step");
    REQUIRE(graph.job_count() == 1);
    graph.add_parameter("hp", captured.hp);
    const float lrs[] = {0.1f, 0.05f, 0.02f};
    for (std::uint64_t step = 0; step < 3; ++step) {
        const auto hp = tpurt::sgd_hyperparameters(lrs[step], 0.9f);
        es.copy_from_host(eager.hp, hp.data(), hp.size() * 4);
        eager.write_inputs(es, step);
        std::uint64_t before = jobs_done();
        eager.queue(es);
        es.synchronize();
        CHECK(jobs_done() - before == graph.eager_job_count());

        graph.set_parameter("hp", std::span<const float>(hp.data(), hp.size()));
        captured.write_inputs(gs, step);
        before = jobs_done();
        graph.replay(gs);
        gs.synchronize();
        CHECK(jobs_done() - before == 1);
        INFO("step " << step);
        CHECK(captured.result_bits() == eager.result_bits());
    }
}
