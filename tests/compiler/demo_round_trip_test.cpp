// SPDX-License-Identifier: MIT
// demo_round_trip_test.cpp - the demo's CNN (demo_cnn.hpp: trained by the demo's trainer on the
// real Fashion-MNIST), exported by tpu-export, compiled back by tpu-compile in bf16 (how the
// stack runs an fp32 checkpoint) and run by the card executor as tpu-serve runs a .tpumodel
// (tpu_serve::GraphRunner: runs of the compiled batch, the last padded), gives the logits of the
// native checkpoint on the card (tpu_infer::load_on_card, tpu-eval's and tpu-serve's path) bit for
// bit: the compiled graph must do the native path's arithmetic, rounding for rounding
// (compiler/README.md, "The demo's CNN, round trip").
#include "demo_cnn.hpp"
#include "onnx_builder.hpp"

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

} // namespace

TEST_CASE("the demo's CNN exported and compiled back gives its native logits bit for bit",
          "[.demo-round-trip]") {
    const std::string ckpt = demo_cnn_checkpoint();
    const std::string onnx = scratch_path("demo_cnn.onnx");
    tpu_export::export_checkpoint(ckpt, onnx, {});
    tpu_onnx::CompileOptions options;
    options.input_shapes = {{"input", {std::int64_t(batch), 1, 28, 28}}};
    options.precision = tpumodel::Precision::Bf16;
    const tpumodel::Model m = tpu_onnx::compile_file(onnx, options).model;

    tpu_data::Dataset test = tpu_data::load_fashion_mnist(
        tpu_data::datasets_dir() + "/fashion-mnist", tpu_data::Split::test);
    test = tpu_data::slice(test, 0, images);
    tpurt::Device dev = tpurt::Device::open_in_process({});
    const std::vector<float> native =
        tpu_infer::load_on_card(dev, tpu_infer::load_network(ckpt), native_batch)
            ->logits(test.features.data(), images);
    tpumodel::card::Executor exe(dev, m);
    const tpu_serve::GraphRunner runner(
        m, [&](const std::vector<tpumodel::Tensor> &in) { return exe.run(in); });
    const std::vector<float> compiled = runner.run(test.features.data(), images);

    REQUIRE(compiled.size() == native.size());
    std::size_t correct = 0; // a trained model: one epoch reaches 88.71% (native, bf16)
    for (std::size_t r = 0; r < images; ++r)
        correct += std::size_t(std::max_element(native.begin() + std::ptrdiff_t(r * 10),
                                                native.begin() + std::ptrdiff_t(r * 10 + 10)) -
                               native.begin() - std::ptrdiff_t(r * 10)) == test.labels[r];
    INFO(correct << " of " << images << " test images right");
    CHECK(correct >= images * 85 / 100);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < native.size(); ++i)
        if (std::bit_cast<std::uint32_t>(compiled[i]) != std::bit_cast<std::uint32_t>(native[i])) {
            if (differ++ == 0)
                UNSCOPED_INFO("first difference: image " << i / 10 << " logit " << i % 10
                                                         << ": compiled " << compiled[i]
                                                         << ", native " << native[i]);
        }
    INFO(differ << " of " << native.size() << " logits differ");
    CHECK(differ == 0);
}

// The fixture of the tests above (tests/compiler/CMakeLists.txt): the checkpoint trained afresh.
TEST_CASE("the demo's CNN trained on the in-process card", "[.demo-cnn]") {
    CHECK(demo_cnn_checkpoint(true) == demo_cnn_path());
}
