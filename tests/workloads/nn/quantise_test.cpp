// SPDX-License-Identifier: MIT
// quantise_test.cpp - the int8 quantiser (tpu_nn/quantise.hpp): per-channel scales, the rounding
// error bound of every weight, calibration ranges, the graphs int8 can and cannot run, the
// quantised checkpoint's round trip and refusals, the int8 network's logits close to the fp32
// network's; the requantisation constants that card and reference share, against values worked
// out by hand.
#include "nn_fixtures.hpp"

#include <tpu_data/error.hpp>
#include <tpu_infer/network.hpp>
#include <tpu_infer/reference.hpp>
#include <tpu_model/checkpoint.hpp>
#include <tpu_nn/cpu_executor.hpp>
#include <tpu_nn/quantise.hpp>
#include <tpu_nn/spec.hpp>
#include <tpurt/testing/test_patterns.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <optional>
#include <unistd.h>
#include <vector>

namespace {

tpu_infer::Network toy(const std::string &spec = "mlp-16-12-8-4") {
    return tpu_test::random_network(spec, 7);
}

tpu_nn::CpuExecutor fp32_of(const tpu_infer::Network &net) {
    tpu_nn::CpuExecutor cpu(net.graph, 0);
    cpu.values() = net.values;
    return cpu;
}

std::string temp_path() {
    char templ[] = "/tmp/tpu-quant-XXXXXX";
    const int fd = mkstemp(templ);
    REQUIRE(fd >= 0);
    close(fd);
    return templ;
}

} // namespace

TEST_CASE("per-channel weight scales are each column's largest magnitude over 127") {
    // 3 x 2: column 0 holds -2.54 at most, column 1 is all zero.
    const std::vector<float> w = {1.0f, 0.0f, -2.54f, 0.0f, 0.5f, 0.0f};
    const std::vector<float> s = tpu_nn::channel_scales(w, 3, 2);
    REQUIRE(s.size() == 2);
    CHECK(s[0] == Approx(0.02f));
    CHECK(s[1] == 1.0f);
    const std::vector<std::int8_t> q = tpu_nn::quantise_weights(w, 3, 2, s);
    CHECK(q == std::vector<std::int8_t>{50, 0, -127, 0, 25, 0});
    CHECK_THROWS(tpu_nn::channel_scales(w, 2, 2));
}

TEST_CASE("every quantised weight is within half a step of the fp32 weight") {
    const std::size_t in = 37, out = 19;
    std::vector<float> w = tpurt::uniform_fp32(in * out, 11, -1.0f, 1.0f);
    for (std::size_t k = 0; k < in; ++k)
        w[k * out + 5] *= 100.0f; // one channel far larger than the rest
    const std::vector<float> s = tpu_nn::channel_scales(w, in, out);
    const std::vector<std::int8_t> q = tpu_nn::quantise_weights(w, in, out, s);
    for (std::size_t n = 0; n < out; ++n) {
        int largest = 0;
        for (std::size_t k = 0; k < in; ++k) {
            const float back = float(q[k * out + n]) * s[n];
            CHECK(std::fabs(back - w[k * out + n]) <= s[n] * 0.5f * 1.0001f);
            largest = std::max(largest, std::abs(int(q[k * out + n])));
        }
        CHECK(largest == 127); // the range is used fully in every channel
    }
    // Per channel, the small channels keep their precision next to the large one.
    CHECK(s[5] > 50 * s[4]);
}

TEST_CASE("activation scales and quantised values") {
    CHECK(tpu_nn::activation_scale(12.7f) == Approx(0.1f));
    CHECK(tpu_nn::activation_scale(0.0f) == 1.0f);
    CHECK_THROWS(tpu_nn::activation_scale(INFINITY));
    CHECK(tpu_nn::quantise_value(0.25f, 10.0f) == 2); // 2.5 -> nearest even
    CHECK(tpu_nn::quantise_value(0.35f, 10.0f) == 4); // 3.5 -> nearest even
    CHECK(tpu_nn::quantise_value(-1e6f, 10.0f) == -127);
    CHECK(tpu_nn::quantise_value(1e6f, 10.0f) == 127);
}

TEST_CASE("calibration takes each layer input's largest magnitude over the samples") {
    const tpu_infer::Network net = toy();
    const std::vector<float> raw = tpurt::uniform_fp32(100 * 16, 5, 0.0f, 1.0f);
    const std::vector<float> x = tpu_infer::standardise(net.input, raw.data(), raw.size());
    tpu_nn::CpuExecutor cpu = fp32_of(net);
    const tpu_nn::Calibration cal = tpu_nn::calibrate(cpu, x.data(), 100);
    REQUIRE(cal.max_abs.size() == 3);
    CHECK(cal.samples == 100);
    float in_max = 0;
    for (float v : x)
        in_max = std::max(in_max, std::fabs(v));
    CHECK(cal.max_abs[0] == in_max);
    cpu.forward(x.data(), 100);
    const std::vector<tpu_nn::NodeId> hidden = {2, 4}; // the ReLUs after layer0 and layer1
    for (std::size_t i = 1; i < 3; ++i) {
        float m = 0;
        for (float v : cpu.activation(hidden[i - 1])) {
            CHECK(v >= 0.0f); // hidden inputs come out of a ReLU
            m = std::max(m, v);
        }
        CHECK(cal.max_abs[i] == m);
    }
    CHECK_THROWS(tpu_nn::calibrate(cpu, x.data(), 0));
}

TEST_CASE("the int8 network's logits stay close to the fp32 network's") {
    tpu_infer::Network net = toy();
    const std::vector<float> raw = tpurt::uniform_fp32(200 * 16, 9, 0.0f, 1.0f);
    const std::vector<float> x = tpu_infer::standardise(net.input, raw.data(), raw.size());
    tpu_nn::CpuExecutor cpu = fp32_of(net);
    const std::vector<float> ref = cpu.forward(x.data(), 200);
    net.int8 = tpu_infer::quantise(net, raw.data(), 200);
    const std::vector<float> got = tpu_infer::reference_logits(net, raw.data(), 200);
    REQUIRE(got.size() == ref.size());
    float range = 0, worst = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        range = std::max(range, std::fabs(ref[i]));
        worst = std::max(worst, std::fabs(got[i] - ref[i]));
    }
    INFO("largest |logit| " << range << ", largest error " << worst);
    CHECK(worst < 0.05f * range);
    const auto a = tpu_infer::argmax_rows(ref, 4), b = tpu_infer::argmax_rows(got, 4);
    std::size_t same = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        same += a[i] == b[i];
    CHECK(same >= 190);
}

TEST_CASE("int8 runs the graphs whose int8 layers meet through ReLU, max pooling and flatten") {
    const std::vector<float> raw = tpurt::uniform_fp32(20 * 64, 4, 0.0f, 1.0f);
    for (const char *spec :
         {"cnn-8x8x1-c4k5-c8-d16-10", "cnn-8x8x1-conv4s2-max2-d-10", "cnn-8x8x1-d16-10"}) {
        INFO(spec);
        const tpu_infer::Network net = toy(spec);
        CHECK_NOTHROW(tpu_infer::quantise(net, raw.data(), 20));
    }
    for (const auto &[spec, why] : std::vector<std::pair<const char *, const char *>>{
             {"cnn-8x8x1-c4-ln-d-10", "layer_norm ln0 has parameters"},
             {"cnn-8x8x1-c4-avg2-d-10", "pool (node 4) follows an int8 layer"},
             {"cnn-8x8x1-d16-tanh-10", "activation (node 4) follows an int8 layer"}}) {
        INFO(spec);
        tpu_infer::Network net = toy(spec);
        CHECK_THROWS_WITH(tpu_infer::quantise(net, raw.data(), 20), Catch::Contains(why));
    }
}

TEST_CASE("a quantised checkpoint round-trips and damaged ones are refused") {
    tpu_infer::Network net = toy();
    const std::vector<float> raw = tpurt::uniform_fp32(50 * 16, 2, 0.0f, 1.0f);
    const tpu_nn::Quantised q = tpu_infer::quantise(net, raw.data(), 50);
    const std::string path = temp_path();
    tpu_model::save_checkpoint(tpu_infer::quantised_checkpoint(net, q), path);
    const tpu_infer::Network back = tpu_infer::load_network(path);
    REQUIRE(back.int8);
    CHECK(back.name == net.name);
    CHECK(back.input.mean == net.input.mean);
    CHECK(back.input.stddev == net.input.stddev);
    CHECK(back.int8->calibration_samples == 50);
    REQUIRE(back.int8->layers.size() == q.layers.size());
    for (std::size_t i = 0; i < q.layers.size(); ++i) {
        CHECK(back.int8->layers[i].node == q.layers[i].node);
        CHECK(back.int8->layers[i].wq == q.layers[i].wq);
        CHECK(back.int8->layers[i].w_scale == q.layers[i].w_scale);
        CHECK(back.int8->layers[i].b == q.layers[i].b);
        CHECK(back.int8->layers[i].x_scale == q.layers[i].x_scale);
    }
    CHECK(std::string(back.precision()) == "int8");
    std::remove(path.c_str());

    const auto refusal = [&](auto &&damage) {
        tpu_model::Checkpoint c = tpu_infer::quantised_checkpoint(net, q);
        damage(c);
        try {
            tpu_infer::network_from_checkpoint(c, "f");
        } catch (const tpu_data::DataError &e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    CHECK_THAT(refusal([](auto &c) { c.tensors[0].data[3] = 0.5f; }),
               Catch::Contains("f: tensor layer0.wq holds 0.5") &&
                   Catch::Contains("not an integer in -127..127"));
    CHECK_THAT(refusal([](auto &c) { c.tensors[0].data[3] = 200.0f; }),
               Catch::Contains("not an integer in -127..127"));
    CHECK_THAT(refusal([](auto &c) { c.tensors[1].data[0] = 0.0f; }),
               Catch::Contains("f: tensor layer0.wscale holds a scale that is not positive"));
    CHECK_THAT(refusal([](auto &c) {
                   c.tensors[5].shape = {3};
                   c.tensors[5].data.resize(3);
               }),
               Catch::Contains("f: tensor layer1.wscale is not 8"));
    CHECK_THAT(refusal([](auto &c) { c.tensors.erase(c.tensors.begin() + 3); }),
               Catch::Contains("f: has no tensor layer0.xscale"));
    CHECK_THAT(refusal([](auto &c) { c.notes[tpu_nn::quantisation_note] = "int4"; }),
               Catch::Contains("is not a quantised checkpoint"));
    CHECK_THAT(refusal([](auto &c) { c.model = "my-net"; }),
               Catch::Contains("f: model 'my-net' is not a model spec"));
    // Without the note it is read as an fp32 checkpoint, which has no layer0.w.
    CHECK_THAT(refusal([](auto &c) { c.notes.erase(tpu_nn::quantisation_note); }),
               Catch::Contains("no tensor layer0.w"));
}

TEST_CASE("fp32 checkpoints: the input transform from the notes, bad notes refused") {
    const tpu_nn::CpuExecutor net(tpu_nn::graph_from_spec("cnn-4x4x1-c2-d-3"), 1);
    tpu_model::Checkpoint c;
    c.model = "cnn-4x4x1-c2-d-3";
    net.save(c);
    const tpu_infer::Network f = tpu_infer::network_from_checkpoint(c, "f");
    CHECK(f.input.mean == 0.0f);
    CHECK(f.input.stddev == 1.0f);
    CHECK(f.values == net.values());
    CHECK(std::string(f.precision()) == "bf16");
    c.notes["input.shape"] = "4x4x3";
    CHECK_THROWS_WITH(tpu_infer::network_from_checkpoint(c, "f"),
                      Catch::Contains("note input.shape '4x4x3' is not cnn-4x4x1-c2-d-3's input "
                                      "4x4x1"));
    c.notes["input.shape"] = "4x4x1";
    c.notes["input.stddev"] = "abc";
    CHECK_THROWS_WITH(tpu_infer::network_from_checkpoint(c, "f"),
                      Catch::Contains("note input.stddev 'abc' is not a finite number"));
    c.notes["input.stddev"] = "-1";
    CHECK_THROWS_WITH(tpu_infer::network_from_checkpoint(c, "f"),
                      Catch::Contains("input.stddev must be positive"));
    c.notes.erase("input.stddev");
    c.tensors.erase(c.tensors.begin() + 1); // conv0.b
    CHECK_THROWS_WITH(tpu_infer::network_from_checkpoint(c, "f"),
                      Catch::Contains("no tensor conv0.b"));
}

TEST_CASE("int8 requantisation constants equal the documented formula, worked by hand") {
    // The card path and the CPU reference both take their constants from requantisation(), so
    // their agreement cannot catch a wrong constant: here they are worked out by hand
    // (quantise.hpp: bias = b / (x_scale w_scale), mult = x_scale w_scale / next x_scale, or
    // x_scale w_scale for the logits), in powers of two so that every value is exact.
    using tpu_nn::Int8LayerConstants;
    Int8LayerConstants k = tpu_nn::requantisation(0.5f, {0.25f, 2.0f}, {1.0f, -3.0f}, 0.125f);
    CHECK(k.bias == std::vector<float>{8.0f, -3.0f});
    CHECK(k.mult == std::vector<float>{1.0f, 8.0f});
    k = tpu_nn::requantisation(0.5f, {0.25f, 2.0f}, {1.0f, -3.0f}, std::nullopt);
    CHECK(k.bias == std::vector<float>{8.0f, -3.0f});
    CHECK(k.mult == std::vector<float>{0.125f, 1.0f});

    // Each layer takes the next one's x_scale, through the block's ReLU, pooling and the flatten;
    // the logits' none: cnn-4x4x1-c1-c1-d1-1 (one channel each).
    const tpu_nn::Graph g = tpu_nn::graph_from_spec("cnn-4x4x1-c1-c1-d1-1");
    tpu_nn::Quantised q;
    const float x_scale[] = {1.0f, 2.0f, 4.0f, 0.25f}, w_scale[] = {0.5f, 0.25f, 0.5f, 8.0f},
                bias[] = {1.0f, 1.0f, 6.0f, 1.0f};
    std::size_t i = 0;
    for (tpu_nn::NodeId n = 1; n < g.nodes().size(); ++n)
        if (!g.node(n).params.empty()) {
            q.layers.push_back({n, x_scale[i], {}, {w_scale[i]}, {bias[i]}});
            q.layers.back().wq.resize(tpu_nn::elements(g.params()[g.node(n).params[0]].shape));
            ++i;
        }
    REQUIRE(q.layers.size() == 4);
    const std::vector<Int8LayerConstants> all = tpu_nn::int8_constants(g, q);
    CHECK(all[0].bias == std::vector<float>{2.0f});
    CHECK(all[0].mult == std::vector<float>{0.25f});
    CHECK(all[1].bias == std::vector<float>{2.0f});
    CHECK(all[1].mult == std::vector<float>{0.125f});
    CHECK(all[2].bias == std::vector<float>{3.0f});
    CHECK(all[2].mult == std::vector<float>{8.0f});
    CHECK(all[3].bias == std::vector<float>{0.5f});
    CHECK(all[3].mult == std::vector<float>{2.0f});
}
