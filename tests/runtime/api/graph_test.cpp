// SPDX-License-Identifier: MIT
// graph_test.cpp - capture and replay (tpurt::Graph) on the in-process card: a captured
// training-like sequence (a convolution layer with zero padding, pooling, a dense layer, the
// fused cross-entropy, backward matmuls through scratch, column sums, an SGD step) gives the
// eager launches' results bit for bit in the jobs it claims, replays with new input contents and
// a new learning rate as the eager launches would, and the refusals and errors: host work in a
// capture, nothing captured, a released buffer, another device, a failing job.
#include <tpurt/codegen/program_builder.hpp>
#include <tpurt/testing/graph_step.hpp>
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/tpurt.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace {

using tpurt::DType;
using tpurt::Tensor;

using Step = tpurt::GraphStep;
constexpr std::size_t N = Step::N, H = Step::H, W = Step::W, C = Step::C;

std::uint64_t jobs_done(const tpurt::Device &dev) {
    return dev.counters().jobs_done;
}

} // namespace

TEST_CASE("graph: a captured step equals the eager launches bit for bit in one job",
          "[in-process][graph]") {
    tpurt::Device eager_dev = tpurt::Device::open_in_process();
    tpurt::Device graph_dev = tpurt::Device::open_in_process();
    Step eager(eager_dev), captured(graph_dev);
    tpurt::Stream es(eager_dev), gs(graph_dev);

    gs.begin_capture();
    captured.queue(gs);
    tpurt::Graph graph = gs.end_capture("step");
    CHECK(graph.name() == "step");
    CHECK(graph.launch_count() == 10); // matmul_tn and matmul_nt two launches each, column_sums one
    CHECK(graph.eager_job_count() >= graph.launch_count());
    CHECK(graph.job_count() == 1);
    CHECK(jobs_done(graph_dev) == 0); // capturing runs nothing

    const float lrs[] = {0.1f, 0.05f, 0.02f};
    for (std::uint64_t step = 0; step < 3; ++step) {
        const auto hp = tpurt::sgd_hyperparameters(lrs[step], 0.9f);
        es.copy_from_host(eager.hp, hp.data(), hp.size() * 4);
        eager.write_inputs(es, step);
        const std::uint64_t eager_before = jobs_done(eager_dev);
        eager.queue(es);
        es.synchronize();
        CHECK(jobs_done(eager_dev) - eager_before == graph.eager_job_count());

        if (step == 0)
            graph.add_parameter("hp", captured.hp);
        graph.set_parameter("hp", std::span<const float>(hp.data(), hp.size()));
        captured.write_inputs(gs, step);
        const std::uint64_t graph_before = jobs_done(graph_dev);
        graph.replay(gs);
        gs.synchronize();
        CHECK(jobs_done(graph_dev) - graph_before == graph.job_count());

        INFO("step " << step);
        CHECK(captured.result_bits() == eager.result_bits());
    }
}

TEST_CASE("graph: host work and waits for other streams are refused in a capture",
          "[in-process][graph]") {
    tpurt::Device dev = tpurt::Device::open_in_process();
    Step st(dev);
    tpurt::Stream s(dev), other(dev);
    CHECK_THROWS_WITH(s.end_capture(), Catch::Contains("without begin_capture()"));
    s.begin_capture();
    CHECK_THROWS_WITH(s.begin_capture(), Catch::Contains("capturing already"));
    std::vector<float> x(N * H * W * C);
    CHECK_THROWS_WITH(s.copy_from_host(st.x, x.data(), x.size() * 4),
                      Catch::Contains("copy_from_host cannot be captured"));
    CHECK_THROWS_WITH(s.enqueue_host("a collective", [] {}),
                      Catch::Contains("a collective cannot be captured"));
    tpurt::pool2d(other, tpurt::PoolOp::Max, st.s, st.p, 2, 2, 2, 2);
    CHECK_THROWS_WITH(s.wait(other.record()),
                      Catch::Contains("a wait for another stream's event cannot be captured"));
    CHECK_THROWS_WITH(s.end_capture("nothing"), Catch::Contains("nothing was captured"));
    other.synchronize();
}

TEST_CASE("graph: a released buffer or another device or no capture is refused",
          "[in-process][graph]") {
    tpurt::Device dev = tpurt::Device::open_in_process();
    tpurt::Device dev2 = tpurt::Device::open_in_process();
    Step st(dev);
    tpurt::Stream s(dev), s2(dev2);
    s.begin_capture();
    st.queue(s);
    tpurt::Graph graph = s.end_capture("step");
    CHECK_THROWS_WITH(graph.replay(s2), Catch::Contains("captured on another device"));
    CHECK_THROWS_WITH(graph.set_parameter("lr", std::vector<float>{1.0f}),
                      Catch::Contains("has no parameter lr"));
    graph.add_parameter("hp", st.hp);
    CHECK_THROWS_WITH(graph.set_parameter("hp", std::vector<float>{1.0f}),
                      Catch::Contains("takes 32 bytes, not 4"));
    const std::uint64_t before = jobs_done(dev);
    { // the loss's buffer moved out of its tensors and freed
        tpurt::Buffer freed = std::move(*st.loss.storage());
    }
    CHECK_THROWS_WITH(graph.replay(s), Catch::Contains("graph step: a captured buffer was "
                                                       "released"));
    s.synchronize();
    CHECK(jobs_done(dev) == before); // nothing was queued
    CHECK_THROWS_WITH(tpurt::Graph().replay(s), Catch::Contains("an empty graph"));
}

TEST_CASE("graph: a failing job of a replay is a JobError naming the graph",
          "[in-process][graph]") {
    tpurt::Device dev = tpurt::Device::open_in_process();
    Step st(dev);
    tpurt::Stream s(dev);
    // A VECTOR beyond the unified buffer: UB_RANGE, after the captured step's first op.
    const std::uint32_t beyond = dev.info().limits.ub_bytes;
    tpurt::ProgramBuilder b;
    b.vector({.a_addr = beyond, .b_addr = 0, .dst_addr = 0, .rows = 1, .cols = 1});
    std::vector<tpurt::Program> programs;
    programs.push_back(b.halt().finish());
    s.begin_capture();
    tpurt::conv2d_layer(s, st.x, st.cw, &st.cb, st.s, {1, 1, 1, 1}, tpurt::Activation::Relu);
    s.enqueue(tpurt::OpLaunch{.executable = std::make_shared<const tpurt::Executable>(
                                  tpurt::Executable::link("bad", {}, std::move(programs))),
                              .bases = {},
                              .buffers = {}});
    tpurt::Graph graph = s.end_capture("failing");
    graph.replay(s);
    try {
        s.synchronize();
        FAIL("the replay did not fail");
    } catch (const tpurt::JobError &e) {
        CHECK(e.status() == TPU_ERR_UB_RANGE);
        CHECK(std::string(e.what()).find("failing") != std::string::npos);
    }
}
