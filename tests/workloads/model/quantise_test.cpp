// SPDX-License-Identifier: MIT
// quantise_test.cpp - the int8 quantiser: per-channel scales, the rounding error bound of every
// weight, calibration ranges, the quantised checkpoint's round trip and refusals, and the int8
// network's logits (in the card's arithmetic) close to the fp32 network's; the requantisation
// constants that card and reference share, against values worked out by hand.
#include <tpu_data/error.hpp>
#include <tpu_infer/network.hpp>
#include <tpu_infer/reference.hpp>
#include <tpu_model/checkpoint.hpp>
#include <tpu_nn/cpu_executor.hpp>
#include <tpu_nn/spec.hpp>
#include <tpu_quant/quantise.hpp>
#include <tpurt/testing/test_patterns.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <optional>
#include <unistd.h>
#include <vector>

namespace {

// A random fp32 MLP 16 -> 12 -> 8 -> 4 (He-initialised as its graph, random biases).
tpu_infer::FloatMlp toy_mlp() {
    const tpu_nn::CpuExecutor net(tpu_nn::graph_from_spec("mlp-16-12-8-4"), 7);
    tpu_model::Checkpoint c;
    c.model = "mlp-16-12-8-4";
    c.notes["input.mean"] = "0.25";
    c.notes["input.stddev"] = "0.5";
    net.save(c);
    for (auto &t : c.tensors)
        if (t.name.ends_with(".b"))
            t.data = tpurt::uniform_fp32(t.data.size(), 3, -0.2f, 0.2f);
    return tpu_infer::float_mlp_from_checkpoint(c, "toy");
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
    const std::vector<float> s = tpu_quant::channel_scales(w, 3, 2);
    REQUIRE(s.size() == 2);
    CHECK(s[0] == Approx(0.02f));
    CHECK(s[1] == 1.0f);
    const std::vector<std::int8_t> q = tpu_quant::quantise_weights(w, 3, 2, s);
    CHECK(q == std::vector<std::int8_t>{50, 0, -127, 0, 25, 0});
    CHECK_THROWS(tpu_quant::channel_scales(w, 2, 2));
}

TEST_CASE("every quantised weight is within half a step of the fp32 weight") {
    const std::size_t in = 37, out = 19;
    std::vector<float> w = tpurt::uniform_fp32(in * out, 11, -1.0f, 1.0f);
    for (std::size_t k = 0; k < in; ++k)
        w[k * out + 5] *= 100.0f; // one channel far larger than the rest
    const std::vector<float> s = tpu_quant::channel_scales(w, in, out);
    const std::vector<std::int8_t> q = tpu_quant::quantise_weights(w, in, out, s);
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
    CHECK(tpu_quant::activation_scale(12.7f) == Approx(0.1f));
    CHECK(tpu_quant::activation_scale(0.0f) == 1.0f);
    CHECK_THROWS(tpu_quant::activation_scale(INFINITY));
    CHECK(tpu_infer::quantise_value(0.25f, 10.0f) == 2); // 2.5 -> nearest even
    CHECK(tpu_infer::quantise_value(0.35f, 10.0f) == 4); // 3.5 -> nearest even
    CHECK(tpu_infer::quantise_value(-1e6f, 10.0f) == -127);
    CHECK(tpu_infer::quantise_value(1e6f, 10.0f) == 127);
}

TEST_CASE("calibration takes each layer input's largest magnitude over the samples") {
    const tpu_infer::FloatMlp net = toy_mlp();
    const std::vector<float> x = tpurt::uniform_fp32(100 * 16, 5, 0.0f, 1.0f);
    const tpu_quant::Calibration cal = tpu_quant::calibrate(net, x.data(), 100);
    REQUIRE(cal.max_abs.size() == 3);
    CHECK(cal.samples == 100);
    float in_max = 0;
    for (float v : x)
        in_max = std::max(in_max, std::fabs(net.input.apply(v)));
    CHECK(cal.max_abs[0] == in_max);
    const auto acts = tpu_infer::fp32_activations(net, x.data(), 100);
    for (std::size_t i = 1; i < 3; ++i) {
        float m = 0;
        for (float v : acts[i]) {
            CHECK(v >= 0.0f); // hidden inputs come out of a ReLU
            m = std::max(m, v);
        }
        CHECK(cal.max_abs[i] == m);
    }
    CHECK_THROWS(tpu_quant::calibrate(net, x.data(), 0));
}

TEST_CASE("the int8 network's logits stay close to the fp32 network's") {
    const tpu_infer::FloatMlp net = toy_mlp();
    const std::vector<float> x = tpurt::uniform_fp32(200 * 16, 9, 0.0f, 1.0f);
    const tpu_infer::Int8Mlp q = tpu_quant::quantise(net, tpu_quant::calibrate(net, x.data(), 200));
    const std::vector<float> ref = tpu_infer::fp32_activations(net, x.data(), 200).back();
    const std::vector<float> got = tpu_infer::reference_logits(q, x.data(), 200);
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

TEST_CASE("a quantised checkpoint round-trips and damaged ones are refused") {
    const tpu_infer::FloatMlp net = toy_mlp();
    const std::vector<float> x = tpurt::uniform_fp32(50 * 16, 2, 0.0f, 1.0f);
    const tpu_infer::Int8Mlp q = tpu_quant::quantise(net, tpu_quant::calibrate(net, x.data(), 50));
    const std::string path = temp_path();
    tpu_model::save_checkpoint(tpu_infer::int8_mlp_to_checkpoint(q), path);
    const tpu_infer::Network back = tpu_infer::load_network(path);
    REQUIRE(std::holds_alternative<tpu_infer::Int8Mlp>(back));
    const auto &b = std::get<tpu_infer::Int8Mlp>(back);
    CHECK(b.name == q.name);
    CHECK(b.input.mean == q.input.mean);
    CHECK(b.input.stddev == q.input.stddev);
    CHECK(b.calibration_samples == 50);
    REQUIRE(b.layers.size() == q.layers.size());
    for (std::size_t i = 0; i < b.layers.size(); ++i) {
        CHECK(b.layers[i].wq == q.layers[i].wq);
        CHECK(b.layers[i].w_scale == q.layers[i].w_scale);
        CHECK(b.layers[i].b == q.layers[i].b);
        CHECK(b.layers[i].x_scale == q.layers[i].x_scale);
    }
    CHECK(std::string(tpu_infer::network_precision(back)) == "int8");

    tpu_model::Checkpoint c = tpu_infer::int8_mlp_to_checkpoint(q);
    c.tensors[0].data[3] = 0.5f;
    CHECK_THROWS_WITH(tpu_infer::int8_mlp_from_checkpoint(c, "f"),
                      Catch::Contains("f: tensor layer0.wq holds 0.5, not an integer"));
    c = tpu_infer::int8_mlp_to_checkpoint(q);
    c.tensors[0].data[3] = 200.0f;
    CHECK_THROWS_WITH(tpu_infer::int8_mlp_from_checkpoint(c, "f"),
                      Catch::Contains("not an integer in -127..127"));
    c = tpu_infer::int8_mlp_to_checkpoint(q);
    c.tensors[1].data[0] = 0.0f;
    CHECK_THROWS_WITH(tpu_infer::int8_mlp_from_checkpoint(c, "f"),
                      Catch::Contains("layer0.wscale holds a scale that is not positive"));
    c = tpu_infer::int8_mlp_to_checkpoint(q);
    c.tensors[5].shape = {3};
    c.tensors[5].data.resize(3);
    CHECK_THROWS_WITH(tpu_infer::int8_mlp_from_checkpoint(c, "f"),
                      Catch::Contains("tensor layer1.wscale is 3, expected 8"));
    c = tpu_infer::int8_mlp_to_checkpoint(q);
    CHECK_THROWS_WITH(tpu_infer::float_mlp_from_checkpoint(c, "f"),
                      Catch::Contains("quantised checkpoint, not an fp32 one"));
    c.notes.erase(tpu_infer::quantisation_note);
    CHECK_THROWS_WITH(tpu_infer::int8_mlp_from_checkpoint(c, "f"),
                      Catch::Contains("is not a quantised checkpoint"));
    std::remove(path.c_str());
}

TEST_CASE("fp32 checkpoints: the input transform from the notes, bad notes refused") {
    const tpu_nn::CpuExecutor net(tpu_nn::graph_from_spec("mlp-4-3-2"), 1);
    tpu_model::Checkpoint c;
    c.model = "mlp-4-3-2";
    net.save(c);
    tpu_infer::FloatMlp f = tpu_infer::float_mlp_from_checkpoint(c, "f");
    CHECK(f.input.mean == 0.0f);
    CHECK(f.input.stddev == 1.0f);
    CHECK(f.layers.size() == 2);
    c.notes["input.stddev"] = "abc";
    CHECK_THROWS_WITH(tpu_infer::float_mlp_from_checkpoint(c, "f"),
                      Catch::Contains("note input.stddev 'abc' is not a finite number"));
    c.notes["input.stddev"] = "-1";
    CHECK_THROWS_WITH(tpu_infer::float_mlp_from_checkpoint(c, "f"),
                      Catch::Contains("input.stddev must be positive"));
    c.notes.erase("input.stddev");
    c.tensors.erase(c.tensors.begin() + 1); // layer0.b
    CHECK_THROWS_WITH(tpu_infer::float_mlp_from_checkpoint(c, "f"),
                      Catch::Contains("has no tensor layer0.b"));
}

TEST_CASE("int8 requantisation constants equal the documented formula, worked by hand") {
    // The card path and the CPU reference both take their constants from requantisation(), so
    // their agreement cannot catch a wrong constant: here they are worked out by hand
    // (reference.hpp: bias = b / (x_scale w_scale), mult = x_scale w_scale / next x_scale, or
    // x_scale w_scale for the last layer), in powers of two so that every value is exact.
    using tpu_infer::Int8LayerConstants;
    Int8LayerConstants k = tpu_infer::requantisation(0.5f, {0.25f, 2.0f}, {1.0f, -3.0f}, 0.125f);
    CHECK(k.bias == std::vector<float>{8.0f, -3.0f});
    CHECK(k.mult == std::vector<float>{1.0f, 8.0f});
    k = tpu_infer::requantisation(0.5f, {0.25f, 2.0f}, {1.0f, -3.0f}, std::nullopt);
    CHECK(k.bias == std::vector<float>{8.0f, -3.0f});
    CHECK(k.mult == std::vector<float>{0.125f, 1.0f});

    // Each layer takes the next layer's x_scale; the last none. A CNN's last convolution takes
    // the first dense layer's.
    std::vector<tpu_infer::Int8Dense> layers(2);
    layers[0].x_scale = 4.0f, layers[0].w_scale = {0.5f}, layers[0].b = {6.0f};
    layers[1].x_scale = 0.25f, layers[1].w_scale = {8.0f}, layers[1].b = {1.0f};
    k = tpu_infer::int8_constants(layers, 0);
    CHECK(k.bias == std::vector<float>{3.0f});
    CHECK(k.mult == std::vector<float>{8.0f});
    k = tpu_infer::int8_constants(layers, 1);
    CHECK(k.bias == std::vector<float>{0.5f});
    CHECK(k.mult == std::vector<float>{2.0f});
    tpu_infer::Int8Cnn cnn;
    cnn.convs.resize(2);
    cnn.convs[0].x_scale = 1.0f, cnn.convs[0].w_scale = {0.5f}, cnn.convs[0].b = {1.0f};
    cnn.convs[1].x_scale = 2.0f, cnn.convs[1].w_scale = {0.25f}, cnn.convs[1].b = {1.0f};
    cnn.dense = layers;
    k = tpu_infer::int8_conv_constants(cnn, 0);
    CHECK(k.bias == std::vector<float>{2.0f});
    CHECK(k.mult == std::vector<float>{0.25f});
    k = tpu_infer::int8_conv_constants(cnn, 1);
    CHECK(k.bias == std::vector<float>{2.0f});
    CHECK(k.mult == std::vector<float>{0.125f});
}
