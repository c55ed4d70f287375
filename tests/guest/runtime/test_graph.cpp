// SPDX-License-Identifier: MIT
// test_graph.cpp - guest test of capture and replay (tpurt::Graph) on the card behind tpu.ko: a
// captured training-like sequence (an SGD update, a convolution layer with zero padding, max
// pooling, a dense layer, the fused cross-entropy, backward matmuls through scratch, column
// sums) replayed as one job gives the eager launches' results bit for bit, over three steps
// with new inputs and a new learning rate (the graph's parameter).
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/tpurt.hpp>

#include "runtime_helpers.hpp"

#include <catch2/catch.hpp>

#include <bit>
#include <cstdint>
#include <span>
#include <vector>

namespace {

using tpurt::DType;
using tpurt::Tensor;

constexpr std::size_t N = 4, H = 8, W = 8, C = 3, F = 8, CLASSES = 10;

struct Step {
    tpurt::Device dev;
    Tensor x, cw, cb, s, p, dw, db, logits, targets, loss, grad, ddw, ddb, dh, m, hp;

    explicit Step(tpurt::Device d)
        : dev(d), x(empty(DType::Fp32, {N, H, W, C})),
          cw(Tensor::from_host<float>(dev, tpurt::random_fp32(9 * C * F, 1), {3, 3, C, F})),
          cb(Tensor::from_host<float>(dev, tpurt::random_fp32(F, 2), {F})),
          s(empty(DType::Fp32, {N, H, W, F})), p(empty(DType::Fp32, {N, H / 2, W / 2, F})),
          dw(Tensor::from_host<float>(dev, tpurt::random_fp32(128 * CLASSES, 3), {128, CLASSES})),
          db(Tensor::from_host<float>(dev, tpurt::random_fp32(CLASSES, 4), {CLASSES})),
          logits(empty(DType::Fp32, {N, CLASSES})), targets(empty(DType::Fp32, {N, CLASSES})),
          loss(empty(DType::Fp32, {N})), grad(empty(DType::Fp32, {N, CLASSES})),
          ddw(Tensor::from_host<float>(dev, std::vector<float>(128 * CLASSES, 0.0f),
                                       {128, CLASSES})),
          ddb(empty(DType::Fp32, {CLASSES})), dh(empty(DType::Fp32, {N, 128})),
          m(Tensor::from_host<float>(dev, std::vector<float>(128 * CLASSES, 0.0f),
                                     {128 * CLASSES})),
          hp(empty(DType::Fp32, {8})) {}

    Tensor empty(DType type, std::vector<std::size_t> shape) {
        return Tensor::empty(dev, type, std::move(shape));
    }

    // The ops of one step, queued (or captured) on `stream`: the update by the last step's
    // gradients first, so that the convolution's zero padding follows a program that used the
    // unified buffer.
    void queue(tpurt::Stream &stream) {
        tpurt::sgd_momentum_step(stream, dw.reshape({128 * CLASSES}), ddw.reshape({128 * CLASSES}),
                                 m, hp);
        tpurt::conv2d_layer(stream, x, cw, &cb, s, {1, 1, 1, 1}, tpurt::Activation::Relu);
        tpurt::pool2d(stream, tpurt::PoolOp::Max, s, p, 2, 2, 2, 2);
        const Tensor flat = p.reshape({N, 128});
        tpurt::dense(stream, flat, dw, &db, logits, tpurt::Activation::None);
        tpurt::softmax_cross_entropy(stream, logits, targets, loss, grad, 1.0f / N);
        tpurt::matmul_tn(stream, flat, grad, ddw);
        tpurt::column_sums(stream, grad, ddb);
        tpurt::matmul_nt(stream, grad, dw, dh);
    }

    // The batch with seed `seed` and the learning rate, written in stream order.
    void write_inputs(tpurt::Stream &stream, std::uint64_t seed) {
        stream.copy_from_host(x, batch(seed).data(), N * H * W * C * 4);
        stream.copy_from_host(targets, one_hot(seed).data(), N * CLASSES * 4);
    }

    static const std::vector<float> &batch(std::uint64_t seed) {
        static std::vector<float> values;
        values = tpurt::random_fp32(N * H * W * C, 100 + seed);
        return values;
    }
    static const std::vector<float> &one_hot(std::uint64_t seed) {
        static std::vector<float> values;
        values.assign(N * CLASSES, 0.0f);
        for (std::size_t r = 0; r < N; ++r)
            values[r * CLASSES + (r * 3 + seed) % CLASSES] = 1.0f;
        return values;
    }

    std::vector<std::vector<float>> results() const {
        std::vector<std::vector<float>> r;
        for (const Tensor *t : {&s, &p, &logits, &loss, &grad, &ddw, &ddb, &dh, &dw, &m})
            r.push_back(t->to_vector<float>());
        return r;
    }
};

std::vector<std::uint32_t> bits(const std::vector<std::vector<float>> &values) {
    std::vector<std::uint32_t> out;
    for (const std::vector<float> &v : values)
        for (float f : v)
            out.push_back(std::bit_cast<std::uint32_t>(f));
    return out;
}

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
        CHECK(bits(captured.results()) == bits(eager.results()));
    }
}
