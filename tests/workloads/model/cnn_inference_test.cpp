// SPDX-License-Identifier: MIT
// cnn_inference_test.cpp - the CNN as inference reads it: its checkpoint (the input shape, the
// convolutions chained channel to channel, the dense layers taking the flattened last block)
// and the refusals of damaged ones; the fp32 forward pass against a direct loop written here;
// the card's bf16 and int8 arithmetic (reference_logits) close to fp32; the quantised CNN's
// checkpoint round trip.
#include "toy_cnn.hpp"

#include <tpu_data/error.hpp>
#include <tpu_infer/network.hpp>
#include <tpu_infer/reference.hpp>
#include <tpu_model/checkpoint.hpp>
#include <tpu_quant/quantise.hpp>
#include <tpurt/testing/test_patterns.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unistd.h>

namespace {

using tpu_test::toy_checkpoint;

std::string temp_path() {
    char templ[] = "/tmp/tpu-cnn-XXXXXX";
    const int fd = mkstemp(templ);
    REQUIRE(fd >= 0);
    close(fd);
    return templ;
}

std::string refusal(const tpu_model::Checkpoint &c) {
    const std::string path = temp_path();
    tpu_model::save_checkpoint(c, path);
    try {
        tpu_infer::load_network(path);
    } catch (const tpu_data::DataError &e) {
        std::remove(path.c_str());
        return e.what();
    }
    std::remove(path.c_str());
    return "accepted";
}

tpu_model::NamedTensor &named(tpu_model::Checkpoint &c, const std::string &name) {
    for (auto &t : c.tensors)
        if (t.name == name)
            return t;
    FAIL("no tensor " << name);
    throw 0;
}

// The CNN's fp32 logits by the definition, one output element at a time in double.
std::vector<float> direct_logits(const tpu_infer::FloatCnn &net, const std::vector<float> &raw,
                                 std::size_t batch) {
    std::vector<float> out;
    for (std::size_t n = 0; n < batch; ++n) {
        tpu_infer::ImageShape s = net.image;
        std::vector<double> x(s.size());
        for (std::size_t i = 0; i < x.size(); ++i)
            x[i] = net.input.apply(raw[n * s.size() + i]);
        for (const tpu_infer::FloatConv &conv : net.convs) {
            const auto at = [&](long y, long xx, std::size_t c) {
                if (y < 0 || xx < 0 || y >= long(s.height) || xx >= long(s.width))
                    return 0.0;
                return x[(std::size_t(y) * s.width + std::size_t(xx)) * s.channels + c];
            };
            const auto conv_relu = [&](std::size_t y, std::size_t xx, std::size_t f) {
                double sum = conv.b[f];
                for (long ky = 0; ky < 3; ++ky)
                    for (long kx = 0; kx < 3; ++kx)
                        for (std::size_t c = 0; c < conv.in; ++c)
                            sum += at(long(y) + ky - 1, long(xx) + kx - 1, c) *
                                   conv.w[((std::size_t(ky) * 3 + std::size_t(kx)) * conv.in + c) *
                                              conv.out +
                                          f];
                return std::max(sum, 0.0);
            };
            const tpu_infer::ImageShape o{s.height / 2, s.width / 2, conv.out};
            std::vector<double> y(o.size());
            for (std::size_t py = 0; py < o.height; ++py)
                for (std::size_t px = 0; px < o.width; ++px)
                    for (std::size_t f = 0; f < conv.out; ++f)
                        y[(py * o.width + px) * conv.out + f] = std::max(
                            {conv_relu(2 * py, 2 * px, f), conv_relu(2 * py, 2 * px + 1, f),
                             conv_relu(2 * py + 1, 2 * px, f),
                             conv_relu(2 * py + 1, 2 * px + 1, f)});
            x = std::move(y);
            s = o;
        }
        for (std::size_t l = 0; l < net.dense.size(); ++l) {
            const tpu_infer::FloatDense &d = net.dense[l];
            std::vector<double> y(d.out);
            for (std::size_t j = 0; j < d.out; ++j) {
                double sum = d.b[j];
                for (std::size_t i = 0; i < d.in; ++i)
                    sum += x[i] * d.w[i * d.out + j];
                y[j] = l + 1 < net.dense.size() ? std::max(sum, 0.0) : sum;
            }
            x = std::move(y);
        }
        out.insert(out.end(), x.begin(), x.end());
    }
    return out;
}

// The largest difference from `ref` relative to ref's largest magnitude, and argmax agreement.
void check_close(const std::vector<float> &got, const std::vector<float> &ref, float tolerance,
                 std::size_t classes, double min_agreement) {
    REQUIRE(got.size() == ref.size());
    float range = 0, worst = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        range = std::max(range, std::fabs(ref[i]));
        worst = std::max(worst, std::fabs(got[i] - ref[i]));
    }
    INFO("largest |logit| " << range << ", largest error " << worst);
    CHECK(worst <= tolerance * range);
    const auto a = tpu_infer::argmax_rows(ref, classes), b = tpu_infer::argmax_rows(got, classes);
    std::size_t same = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        same += a[i] == b[i];
    CHECK(double(same) >= min_agreement * double(a.size()));
}

} // namespace

TEST_CASE("a CNN checkpoint loads with its shapes, damaged ones are refused", "[cnn]") {
    tpu_model::Checkpoint c = toy_checkpoint();
    const tpu_infer::FloatCnn net = tpu_infer::float_cnn_from_checkpoint(c, "toy");
    CHECK(net.image.height == 9);
    CHECK(net.image.width == 8);
    CHECK(net.inputs() == 144);
    CHECK(net.outputs() == 3);
    REQUIRE(net.convs.size() == 2);
    CHECK(net.convs[1].in == 4);
    CHECK(net.convs[1].out == 6);
    REQUIRE(net.dense.size() == 2);
    const auto shapes = tpu_infer::block_shapes(net.image, {4, 6});
    CHECK(shapes.back().size() == 24);

    SECTION("no input shape") {
        c.notes.erase("input.shape");
        CHECK_THAT(refusal(c), Catch::Contains("has convolutions but no note input.shape"));
    }
    SECTION("a malformed input shape") {
        c.notes["input.shape"] = "9x8";
        CHECK_THAT(refusal(c), Catch::Contains("note input.shape '9x8' is not HxWxC"));
    }
    SECTION("convolutions that do not chain") {
        named(c, "conv1.w").shape = {3, 3, 5, 6};
        named(c, "conv1.w").data.resize(3 * 3 * 5 * 6);
        CHECK_THAT(refusal(c), Catch::Contains("tensor conv1.w must be 3x3x4xF (HWIO)"));
    }
    SECTION("a dense layer that does not take the last block") {
        named(c, "layer0.w").shape = {20, 10};
        named(c, "layer0.w").data.resize(200);
        CHECK_THAT(refusal(c),
                   Catch::Contains("layer0 takes 20 inputs, the convolutions give 2x2x6"));
    }
    SECTION("a missing bias") {
        c.tensors.erase(c.tensors.begin() + 1);
        CHECK_THAT(refusal(c), Catch::Contains("has no tensor conv0.b"));
    }
}

TEST_CASE("the CNN's fp32 forward pass is the definition", "[cnn]") {
    const tpu_infer::FloatCnn net = tpu_infer::float_cnn_from_checkpoint(toy_checkpoint(), "toy");
    const std::vector<float> x = tpurt::uniform_fp32(7 * 144, 5, 0.0f, 1.0f);
    const auto acts = tpu_infer::fp32_activations(net, x.data(), 7);
    REQUIRE(acts.size() == 2 + 2 + 1);
    CHECK(acts[1].size() == 7 * 4 * 4 * 4);
    CHECK(acts[2].size() == 7 * 24);
    check_close(acts.back(), direct_logits(net, x, 7), 1e-5f, 3, 1.0);
}

TEST_CASE("the card's bf16 and int8 CNN arithmetic stays close to fp32", "[cnn]") {
    const tpu_infer::FloatCnn net = tpu_infer::float_cnn_from_checkpoint(toy_checkpoint(), "toy");
    const std::size_t n = 300;
    const std::vector<float> x = tpurt::uniform_fp32(n * 144, 6, 0.0f, 1.0f);
    const std::vector<float> ref = tpu_infer::fp32_activations(net, x.data(), n).back();
    check_close(tpu_infer::reference_logits(net, x.data(), n), ref, 0.03f, 3, 0.97);
    const tpu_quant::Calibration cal = tpu_quant::calibrate(net, x.data(), n);
    REQUIRE(cal.max_abs.size() == 4);
    const tpu_infer::Int8Cnn q = tpu_quant::quantise(net, cal);
    check_close(tpu_infer::reference_logits(q, x.data(), n), ref, 0.08f, 3, 0.9);
}

TEST_CASE("a quantised CNN's checkpoint round-trips", "[cnn]") {
    const tpu_infer::FloatCnn net = tpu_infer::float_cnn_from_checkpoint(toy_checkpoint(), "toy");
    const std::vector<float> x = tpurt::uniform_fp32(50 * 144, 7, 0.0f, 1.0f);
    const tpu_infer::Int8Cnn q = tpu_quant::quantise(net, tpu_quant::calibrate(net, x.data(), 50));
    const std::string path = temp_path();
    tpu_model::save_checkpoint(tpu_infer::int8_cnn_to_checkpoint(q), path);
    const tpu_infer::Network back = tpu_infer::load_network(path);
    std::remove(path.c_str());
    REQUIRE(std::holds_alternative<tpu_infer::Int8Cnn>(back));
    const auto &b = std::get<tpu_infer::Int8Cnn>(back);
    CHECK(std::string(tpu_infer::network_precision(back)) == "int8");
    CHECK(b.calibration_samples == 50);
    REQUIRE(b.convs.size() == 2);
    for (std::size_t i = 0; i < 2; ++i) {
        CHECK(b.convs[i].wq == q.convs[i].wq);
        CHECK(b.convs[i].w_scale == q.convs[i].w_scale);
        CHECK(b.convs[i].x_scale == q.convs[i].x_scale);
    }
    CHECK(tpu_infer::reference_logits(back, x.data(), 50) ==
          tpu_infer::reference_logits(q, x.data(), 50));
}
