// SPDX-License-Identifier: MIT
// demo_round_trip_test.cpp - the demo's CNN (demo_cnn.hpp: trained by the demo's trainer on the
// real Fashion-MNIST), exported by tpu-export, compiled back by tpu-compile in bf16 (how the
// stack runs an fp32 checkpoint) and run by the card executor as tpu-serve runs a .tpumodel
// (tpu_serve::GraphRunner: runs of the compiled batch, the last padded), gives the logits of the
// native checkpoint on the card (tpu_infer::load_on_card, tpu-eval's and tpu-serve's path) bit for
// bit: the compiled graph must do the native path's arithmetic, rounding for rounding
// (compiler/README.md, "The demo's CNN, round trip"); and tpu-serve's HTTP server answers the same
// logits for both, the checkpoint served natively and the compiled model (KServe v2 JSON); and
// compiled for int8 it is as accurate as the stack's own int8 quantisation (tpu-quantise).
#include "demo_cnn.hpp"
#include "onnx_builder.hpp"
#include "served_logits.hpp"

#include <tpu_data/dataset.hpp>
#include <tpu_export/export.hpp>
#include <tpu_infer/card_model.hpp>
#include <tpu_onnx/compile.hpp>
#include <tpu_serve/graph_model.hpp>
#include <tpumodel/card_executor.hpp>

#include <tpurt/device.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>

using namespace compiler_test;

namespace {

// The compiled batch leaves a padded last run; the native model runs tpu-eval's batches of 256.
constexpr std::size_t images = 10000, batch = 96, native_batch = 256;

// How many rows of `logits` (10 a row) have the label of `d`'s sample.
std::size_t correct(const std::vector<float> &logits, const tpu_data::Dataset &d) {
    REQUIRE(logits.size() == d.count * 10);
    std::size_t right = 0;
    for (std::size_t r = 0; r < d.count; ++r)
        right += std::size_t(std::max_element(logits.begin() + std::ptrdiff_t(r * 10),
                                              logits.begin() + std::ptrdiff_t(r * 10 + 10)) -
                             logits.begin() - std::ptrdiff_t(r * 10)) == d.labels[r];
    return right;
}

tpumodel::Model compile_demo_cnn(const std::string &ckpt) {
    const std::string onnx = scratch_path("demo_cnn.onnx");
    tpu_export::export_checkpoint(ckpt, onnx, {});
    tpu_onnx::CompileOptions options;
    options.input_shapes = {{"input", {std::int64_t(batch), 1, 28, 28}}};
    options.precision = tpumodel::Precision::Bf16;
    return tpu_onnx::compile_file(onnx, options).model;
}

// How many of `a`'s and `b`'s logits differ in their bits (the first one described in an INFO).
std::size_t differing(const std::vector<float> &a, const std::vector<float> &b) {
    REQUIRE(a.size() == b.size());
    std::size_t differ = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::bit_cast<std::uint32_t>(a[i]) != std::bit_cast<std::uint32_t>(b[i]) &&
            differ++ == 0)
            UNSCOPED_INFO("first difference: image " << i / 10 << " logit " << i % 10 << ": "
                                                     << a[i] << " and " << b[i]);
    return differ;
}

} // namespace

TEST_CASE("the demo's CNN exported and compiled back gives its native logits bit for bit",
          "[.demo-round-trip]") {
    const std::string ckpt = demo_cnn_checkpoint();
    const tpumodel::Model m = compile_demo_cnn(ckpt);

    const tpu_data::Dataset test = tpu_data::load_fashion_mnist(
        tpu_data::datasets_dir() + "/fashion-mnist", tpu_data::Split::test);
    REQUIRE(test.count == images);
    tpurt::Device dev = tpurt::Device::open_in_process({});
    const std::vector<float> native =
        tpu_infer::load_on_card(dev, tpu_infer::load_network(ckpt), native_batch)
            ->logits(test.features.data(), images);
    tpumodel::card::Executor exe(dev, m);
    const tpu_serve::GraphRunner runner(
        m, [&](const std::vector<tpumodel::Tensor> &in) { return exe.run(in); });
    const std::vector<float> compiled = runner.run(test.features.data(), images);

    REQUIRE(compiled.size() == native.size());
    const std::size_t right = correct(native, test); // one epoch: 88.71% (native, bf16)
    INFO(right << " of " << images << " test images right");
    CHECK(right >= images * 85 / 100);
    const std::size_t differ = differing(compiled, native);
    INFO(differ << " of " << native.size() << " logits differ");
    CHECK(differ == 0);
}

TEST_CASE("tpu-serve answers the demo's CNN compiled back with its native logits over HTTP",
          "[.demo-round-trip]") {
    const std::string ckpt = demo_cnn_checkpoint();
    const tpumodel::Model m = compile_demo_cnn(ckpt);
    const tpu_data::Dataset test = tpu_data::load_fashion_mnist(
        tpu_data::datasets_dir() + "/fashion-mnist", tpu_data::Split::test);
    constexpr std::size_t served = 8 * serve_batch;

    // As tpu-serve CHECKPOINT and tpu-serve --model x.tpumodel serve them, each on its card.
    const tpu_infer::Network net = tpu_infer::load_network(ckpt);
    tpu_serve::ModelSignature sig;
    sig.name = "native";
    sig.features = net.inputs();
    sig.classes = net.outputs();
    tpurt::Device native_card = tpurt::Device::open_in_process({});
    const std::unique_ptr<tpu_infer::CardModel> model =
        tpu_infer::load_on_card(native_card, net, serve_batch);
    const std::vector<float> native =
        served_logits(sig, [&](const float *x, std::size_t rows) { return model->logits(x, rows); },
                      test.features.data(), served, {1, 28, 28});

    tpurt::Device compiled_card = tpurt::Device::open_in_process({});
    tpumodel::card::Executor exe(compiled_card, m);
    const tpu_serve::GraphRunner runner(
        m, [&](const std::vector<tpumodel::Tensor> &in) { return exe.run(in); });
    const std::vector<float> compiled =
        served_logits(tpu_serve::graph_signature(m, "compiled"),
                      [&](const float *x, std::size_t rows) { return runner.run(x, rows); },
                      test.features.data(), served, {1, 28, 28});

    REQUIRE(native.size() == served * 10);
    const std::size_t differ = differing(compiled, native);
    INFO(differ << " of " << native.size() << " logits differ");
    CHECK(differ == 0);
}

TEST_CASE("the demo's CNN compiled for int8 is as accurate as tpu-quantise's int8 checkpoint",
          "[.demo-round-trip]") {
    // Both calibrated on the first 500 training images (raw pixels: the graph normalises them).
    const std::string ckpt = demo_cnn_checkpoint();
    const tpu_data::Dataset train = tpu_data::load_fashion_mnist(
        tpu_data::datasets_dir() + "/fashion-mnist", tpu_data::Split::train);
    const tpu_data::Dataset test = tpu_data::load_fashion_mnist(
        tpu_data::datasets_dir() + "/fashion-mnist", tpu_data::Split::test);
    constexpr std::size_t calibration = 500;
    const std::string onnx = scratch_path("demo_cnn_int8.onnx");
    tpu_export::export_checkpoint(ckpt, onnx, {});
    tpu_onnx::CompileOptions options;
    options.input_shapes = {{"input", {std::int64_t(batch), 1, 28, 28}}};
    options.precision = tpumodel::Precision::Int8;
    options.calibration.assign(train.features.begin(),
                               train.features.begin() + std::ptrdiff_t(calibration * 784));
    const tpumodel::Model m = tpu_onnx::compile_file(onnx, options).model;

    const tpu_infer::Network net = tpu_infer::load_network(ckpt);
    tpu_infer::Network native_int8 = net;
    native_int8.int8 = tpu_infer::quantise(net, train.features.data(), calibration);
    tpurt::Device dev = tpurt::Device::open_in_process({});
    tpumodel::card::Executor exe(dev, m);
    const tpu_serve::GraphRunner runner(
        m, [&](const std::vector<tpumodel::Tensor> &in) { return exe.run(in); });
    const std::size_t compiled = correct(runner.run(test.features.data(), test.count), test);
    const std::size_t native = correct(tpu_infer::load_on_card(dev, native_int8, native_batch)
                                           ->logits(test.features.data(), test.count),
                                       test);
    const std::size_t bf16 = correct(
        tpu_infer::load_on_card(dev, net, native_batch)->logits(test.features.data(), test.count),
        test);
    INFO("right of 10,000: compiled int8 " << compiled << ", tpu-quantise's int8 " << native
                                           << ", native bf16 " << bf16);
    CHECK(compiled + 100 >= bf16);
    CHECK(compiled + 100 >= native);
}

// The fixture of the tests above (tests/compiler/CMakeLists.txt): the checkpoint trained afresh.
TEST_CASE("the demo's CNN trained on the in-process card", "[.demo-cnn]") {
    CHECK(demo_cnn_checkpoint(true) == demo_cnn_path());
}
