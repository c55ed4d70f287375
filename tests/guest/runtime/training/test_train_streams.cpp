// SPDX-License-Identifier: MIT
// test_train_streams.cpp - guest test: the stream forms of the training ops of train_ops.hpp
// (softmax, log_softmax, softmax_cross_entropy, activation_grad, sgd_momentum_step, adam_step,
// divide, matmul_tn, matmul_nt, column_sums) on the real card. One dense layer's training step is
// queued on two streams, the second waiting on the card for an event of the first, with an
// operand and the scratch of the sequences released while queued; every result equals the
// blocking forms' bit for bit. A job of a queued training op that fails is reported by
// synchronize() naming the executable that failed (one launch, and the second of a sequence);
// operand errors are thrown when the op is queued, naming the op.
#include <tpurt/codegen/program_builder.hpp>
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/tpurt.hpp>

#include "runtime_helpers.hpp"

#include <catch2/catch.hpp>

#include <bit>
#include <cstdint>
#include <vector>

namespace {

using tpurt::DType;
using tpurt::GradFunction;
using tpurt::Tensor;

using guest_test::device;
using guest_test::require_refused;

constexpr std::size_t rows = 16, inputs = 24, classes = 10;

std::vector<std::uint32_t> bits(const Tensor &t) {
    std::vector<std::uint32_t> b;
    for (float x : t.to_vector<float>())
        b.push_back(std::bit_cast<std::uint32_t>(x));
    return b;
}

Tensor fp32(const std::vector<float> &v, std::vector<std::size_t> shape) {
    return Tensor::from_host<float>(device(), v, std::move(shape));
}

Tensor zeros(std::vector<std::size_t> shape, DType type = DType::Fp32) {
    std::size_t n = 1;
    for (std::size_t s : shape)
        n *= s;
    Tensor t = Tensor::empty(device(), type, std::move(shape));
    if (type == DType::Fp32)
        t.copy_from_host(std::vector<float>(n, 0.0f));
    return t;
}

// The inputs of one dense layer's training step: h [rows, inputs] (ReLU'd, so zeros too),
// logits [rows, classes] and one-hot targets, the layer's weights [inputs, classes], a divisor,
// and the optimisers' weights, state and hyperparameters.
struct Inputs {
    std::vector<float> h = tpurt::uniform_fp32(rows * inputs, 1, -1.0f, 1.0f);
    std::vector<float> logits = tpurt::uniform_fp32(rows * classes, 2, -3.0f, 3.0f);
    std::vector<float> targets = std::vector<float>(rows * classes, 0.0f);
    std::vector<float> weights = tpurt::uniform_fp32(inputs * classes, 3, -0.5f, 0.5f);
    std::vector<float> divisor = tpurt::uniform_fp32(rows * classes, 4, 0.5f, 2.0f);
    std::vector<float> w = tpurt::uniform_fp32(inputs * classes, 5, -1.0f, 1.0f);
    std::vector<float> state = tpurt::uniform_fp32(inputs * classes, 6, 0.0f, 0.1f);
    Inputs() {
        for (float &x : h)
            x = x < 0.0f ? 0.0f : x;
        for (std::size_t r = 0; r < rows; ++r)
            targets[r * classes + (r * 7) % classes] = 1.0f;
    }
};

// Every output of the step, allocated per run.
struct Outputs {
    Tensor sm = zeros({rows, classes}), lsm = zeros({rows, classes});
    Tensor loss = zeros({rows}), grad = zeros({rows, classes});
    Tensor gw = zeros({inputs, classes}), gb = zeros({classes});
    Tensor dh = zeros({rows, inputs}), dx = zeros({rows, inputs}), q = zeros({rows, classes});
    Tensor sgd_w, sgd_m, adam_w, adam_m, adam_v;
    Tensor adam_bf16 = zeros({inputs, classes}, DType::Bf16);
    explicit Outputs(const Inputs &in)
        : sgd_w(fp32(in.w, {inputs, classes})), sgd_m(fp32(in.state, {inputs, classes})),
          adam_w(fp32(in.w, {inputs, classes})), adam_m(fp32(in.state, {inputs, classes})),
          adam_v(fp32(in.state, {inputs, classes})) {}

    std::vector<std::vector<std::uint32_t>> all() const {
        std::vector<std::vector<std::uint32_t>> v;
        for (const Tensor *t : {&sm, &lsm, &loss, &grad, &gw, &gb, &dh, &dx, &q, &sgd_w, &sgd_m,
                                &adam_w, &adam_m, &adam_v})
            v.push_back(bits(*t));
        std::vector<std::uint32_t> b;
        for (tpurt::Bf16 x : adam_bf16.to_vector<tpurt::Bf16>())
            b.push_back(x.bits);
        v.push_back(b);
        return v;
    }
};

} // namespace

TEST_CASE("the training ops' stream forms on two streams equal their blocking forms bit for bit") {
    tpurt::Device &dev = device();
    const Inputs in;
    const Tensor logits = fp32(in.logits, {rows, classes});
    const Tensor targets = fp32(in.targets, {rows, classes});
    const Tensor weights = fp32(in.weights, {inputs, classes});
    const Tensor divisor = fp32(in.divisor, {rows, classes});
    const auto sgd_hp = tpurt::sgd_hyperparameters(0.05f, 0.9f);
    const auto adam_hp = tpurt::adam_hyperparameters(0.01f, 0.9f, 0.999f, 1e-8f, 0.0f, 3);
    const Tensor sgd_hp_t = fp32({sgd_hp.begin(), sgd_hp.end()}, {sgd_hp.size()});
    const Tensor adam_hp_t = fp32({adam_hp.begin(), adam_hp.end()}, {adam_hp.size()});
    const float scale = 1.0f / float(rows);

    Outputs want(in);
    {
        const Tensor h = fp32(in.h, {rows, inputs});
        tpurt::softmax(dev, logits, want.sm);
        tpurt::log_softmax(dev, logits, want.lsm);
        tpurt::softmax_cross_entropy(dev, logits, targets, want.loss, want.grad, scale);
        tpurt::matmul_tn(dev, h, want.grad, want.gw);
        tpurt::column_sums(dev, want.grad, want.gb);
        tpurt::matmul_nt(dev, want.grad, weights, want.dh);
        tpurt::activation_grad(dev, GradFunction::Relu, h, want.dh, want.dx);
        tpurt::divide(dev, want.sm, divisor, want.q);
        tpurt::sgd_momentum_step(dev, want.sgd_w, want.gw, want.sgd_m, sgd_hp_t);
        tpurt::adam_step(dev, want.adam_w, want.gw, want.adam_m, want.adam_v, adam_hp_t,
                         &want.adam_bf16);
    }

    // The forward half on stream a, the backward half on stream b behind a's event; h is
    // released while b's ops that read it are queued.
    Outputs got(in);
    tpurt::Stream a(dev), b(dev);
    {
        const Tensor h = fp32(in.h, {rows, inputs});
        tpurt::softmax(a, logits, got.sm);
        tpurt::log_softmax(a, logits, got.lsm);
        tpurt::softmax_cross_entropy(a, logits, targets, got.loss, got.grad, scale);
        b.wait(a.record());
        tpurt::matmul_tn(b, h, got.grad, got.gw);
        tpurt::column_sums(b, got.grad, got.gb);
        tpurt::matmul_nt(b, got.grad, weights, got.dh);
        tpurt::activation_grad(b, GradFunction::Relu, h, got.dh, got.dx);
        tpurt::divide(b, got.sm, divisor, got.q);
        tpurt::sgd_momentum_step(b, got.sgd_w, got.gw, got.sgd_m, sgd_hp_t);
        tpurt::adam_step(b, got.adam_w, got.gw, got.adam_m, got.adam_v, adam_hp_t, &got.adam_bf16);
    }
    b.synchronize();
    a.synchronize();
    const auto w = want.all(), g = got.all();
    REQUIRE(w.size() == g.size());
    for (std::size_t i = 0; i < w.size(); ++i) {
        INFO("output " << i);
        CHECK(g[i] == w[i]);
    }
}

namespace {

// `launch` with its first program's first instruction replaced by an invalid opcode: the same
// executable name, arguments and buffers, a job the card ends with an error.
tpurt::OpLaunch broken(const tpurt::OpLaunch &launch) {
    const tpurt::Executable &exe = *launch.executable;
    std::vector<std::uint64_t> placeholders;
    for (std::size_t i = 0; i < exe.args().size(); ++i)
        placeholders.push_back(tpurt::Executable::placeholder(i));
    std::vector<tpurt::Program> programs;
    for (std::size_t p = 0; p < exe.program_count(); ++p)
        programs.push_back(exe.patched(p, placeholders));
    programs[0].insns[0].hdr.opcode = 0x7f;
    return {.executable = std::make_shared<const tpurt::Executable>(
                tpurt::Executable::link(exe.name(), exe.args(), std::move(programs))),
            .bases = launch.bases,
            .buffers = launch.buffers};
}

// Queues `sequence` on a new stream and checks that synchronize() reports the error of `name`.
void require_named_at_synchronize(tpurt::OpSequence sequence, const std::string &name) {
    tpurt::Stream stream(device());
    stream.enqueue(std::move(sequence));
    try {
        stream.synchronize();
        FAIL("no error reported");
    } catch (const tpurt::JobError &error) {
        CHECK(error.op() == name);
        CHECK(std::string(error.what()).find(name) == 0);
    }
    stream.synchronize(); // reported once
}

} // namespace

TEST_CASE("a failing training op on a stream is named at synchronize; bad operands at once") {
    tpurt::Device &dev = device();
    const Inputs in;
    const Tensor logits = fp32(in.logits, {rows, classes});
    const Tensor targets = fp32(in.targets, {rows, classes});
    const Tensor h = fp32(in.h, {rows, inputs});
    const Tensor loss = zeros({rows}), grad = zeros({rows, classes}), gw = zeros({inputs, classes});

    const tpurt::OpLaunch ce =
        tpurt::prepare_softmax_cross_entropy(dev, logits, targets, loss, grad, 0.5f);
    CHECK(ce.name().starts_with("softmax_cross_entropy "));
    require_named_at_synchronize({{broken(ce)}}, ce.name());

    tpurt::OpSequence tn = tpurt::prepare_matmul_tn(dev, h, grad, gw);
    REQUIRE(tn.launches.size() == 2);
    CHECK(tn.launches[0].name().starts_with("transpose "));
    const std::string matmul = tn.launches[1].name();
    CHECK(matmul.starts_with("matmul "));
    tn.launches[1] = broken(tn.launches[1]);
    require_named_at_synchronize(std::move(tn), matmul);

    tpurt::Stream stream(dev);
    const Tensor wrong = zeros({inputs, classes + 1});
    require_refused([&] { tpurt::adam_step(stream, gw, wrong, gw, gw, loss); }, "adam");
    require_refused([&] { tpurt::matmul_tn(stream, zeros({2, 3, 4}), grad, gw); }, "matmul_tn");
    require_refused([&] { tpurt::softmax(stream, logits, wrong); }, "softmax");
    stream.synchronize();
}
