// SPDX-License-Identifier: MIT
// export_test.cpp - tpu-export's ONNX models of checkpoints: they pass ONNX's checker, and
// compiled back by tpu-compile's front end and run by the CPU reference executor they compute the
// logits the stack's own CPU models compute from the checkpoint (the normalisation, the OIHW
// weights and the first dense layer's (c, h, w) row order must all survive both conversions).
// Quantised and broken checkpoints are refused, naming the file.
#include "onnx_builder.hpp"

#include <tpu_export/export.hpp>
#include <tpu_nn/cpu_executor.hpp>
#include <tpu_nn/spec.hpp>
#include <tpu_onnx/compile.hpp>
#include <tpumodel/cpu_executor.hpp>

#include <catch2/catch.hpp>

#include <onnx/checker.h>

#include <cmath>
#include <fstream>

using namespace compiler_test;

namespace {

constexpr float mean = 0.2860f, stddev = 0.3530f;

// Non-zero biases (the trainers start them at zero) so that the export must carry them.
void give_biases(std::vector<tpu_model::Param> params, std::uint32_t seed) {
    for (tpu_model::Param &p : params)
        if (p.key.ends_with(".b"))
            *p.value = pattern(p.value->size(), seed++);
}

std::string save(tpu_model::Checkpoint &c, const std::string &file) {
    c.notes["input.mean"] = std::to_string(mean);
    c.notes["input.stddev"] = std::to_string(stddev);
    const std::string path = scratch_path(file);
    tpu_model::save_checkpoint(c, path);
    return path;
}

// The exported model compiled at `shape` and run on the CPU executor on raw inputs `x`.
std::vector<float> run_exported(const std::string &onnx_path,
                                const std::vector<std::int64_t> &shape,
                                const std::vector<float> &x) {
    tpu_onnx::CompileOptions options;
    options.input_shapes = {{"input", shape}};
    const tpumodel::Model m = tpu_onnx::compile_file(onnx_path, options).model;
    const std::vector<tpumodel::Tensor> out = tpumodel::cpu::run_model(m, {float_tensor(shape, x)});
    REQUIRE(out.size() == 1);
    return float_values(out[0]);
}

std::vector<float> normalised(std::vector<float> x) {
    for (float &v : x)
        v = (v - mean) / stddev;
    return x;
}

void check_close(const std::vector<float> &got, const std::vector<float> &want) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("logit " << i << ": " << got[i] << " vs " << want[i]);
        CHECK(std::fabs(got[i] - want[i]) <= 1e-5f + 1e-4f * std::fabs(want[i]));
    }
}

std::vector<float> raw_pixels(std::size_t n, std::uint32_t seed) {
    std::vector<float> x = pattern(n, seed);
    for (float &v : x)
        v = 0.5f * (v + 1.0f); // [0, 1), as the data sets' pixels
    return x;
}

} // namespace

TEST_CASE("an exported MLP computes the checkpoint's logits", "[export]") {
    tpu_nn::CpuExecutor mlp(tpu_nn::graph_from_spec("mlp-20-12-7-5"), 11);
    give_biases(mlp.params(), 100);
    tpu_model::Checkpoint c;
    c.model = "mlp-20-12-7-5";
    mlp.save(c);
    const std::string onnx_path = scratch_path("mlp.onnx");
    const tpu_export::ExportSummary s =
        tpu_export::export_checkpoint(save(c, "mlp.ckpt"), onnx_path, {});
    CHECK(s.model == "mlp-20-12-7-5");
    CHECK(s.input_shape == "batchx20");
    CHECK(s.output_shape == "batchx5");
    CHECK(s.parameters == 20 * 12 + 12 + 12 * 7 + 7 + 7 * 5 + 5 + 2);

    const std::size_t batch = 3;
    const std::vector<float> x = raw_pixels(batch * 20, 7);
    const std::vector<float> xn = normalised(x);
    check_close(run_exported(onnx_path, {3, 20}, x), mlp.forward(xn.data(), batch));
}

TEST_CASE("an exported CNN computes the checkpoint's logits", "[export]") {
    // Two channels and a non-square image, so that the (h, w, c) -> (c, h, w) reordering of the
    // first dense layer and the OIHW weights are both exercised.
    tpu_nn::CpuExecutor cnn(tpu_nn::graph_from_spec("cnn-10x8x2-c4-c6-d9-5"), 5);
    give_biases(cnn.params(), 200);
    tpu_model::Checkpoint c;
    c.model = cnn.graph().name();
    c.notes["input.shape"] = "10x8x2";
    cnn.save(c);
    const std::string onnx_path = scratch_path("cnn.onnx");
    const tpu_export::ExportSummary s =
        tpu_export::export_checkpoint(save(c, "cnn.ckpt"), onnx_path, {.batch = 2});
    CHECK(s.input_shape == "2x2x10x8");
    CHECK(s.output_shape == "2x5");

    // The same pixels in the stack's NHWC for the graph and in ONNX's NCHW for the export.
    const std::size_t batch = 2, h = 10, w = 8, ch = 2;
    const std::vector<float> nhwc = raw_pixels(batch * h * w * ch, 9);
    std::vector<float> nchw(nhwc.size());
    for (std::size_t n = 0; n < batch; ++n)
        for (std::size_t y = 0; y < h; ++y)
            for (std::size_t x = 0; x < w; ++x)
                for (std::size_t k = 0; k < ch; ++k)
                    nchw[((n * ch + k) * h + y) * w + x] = nhwc[((n * h + y) * w + x) * ch + k];
    const std::vector<float> xn = normalised(nhwc);
    check_close(run_exported(onnx_path, {2, 2, 10, 8}, nchw), cnn.forward(xn.data(), batch));

    // What ONNX itself says of the file.
    onnx::ModelProto m;
    std::ifstream in(onnx_path, std::ios::binary);
    REQUIRE(m.ParseFromIstream(&in));
    CHECK_NOTHROW(onnx::checker::check_model(m));
    CHECK(m.opset_import(0).version() == tpu_export::export_opset);
}

TEST_CASE("tpu-export refuses quantised and broken checkpoints", "[export]") {
    tpu_model::Checkpoint c;
    c.model = "mlp-4-3";
    c.tensors.push_back({"layer0.wq", {4, 3}, std::vector<float>(12, 1.0f)});
    c.tensors.push_back({"layer0.wscale", {3}, std::vector<float>(3, 0.1f)});
    c.tensors.push_back({"layer0.b", {3}, std::vector<float>(3, 0.0f)});
    c.tensors.push_back({"layer0.xscale", {1}, {0.02f}});
    c.notes["quantisation"] = "int8-symmetric-per-channel-v1";
    const std::string quantised = save(c, "int8.ckpt");
    CHECK_THROWS_WITH(tpu_export::export_checkpoint(quantised, scratch_path("int8.onnx"), {}),
                      Catch::Contains("int8.ckpt: is a quantised checkpoint") &&
                          Catch::Contains("--dtype int8"));

    tpu_model::Checkpoint unnamed;
    unnamed.model = "resnet50";
    CHECK_THROWS_WITH(
        tpu_export::export_checkpoint(save(unnamed, "unnamed.ckpt"), scratch_path("u.onnx"), {}),
        Catch::Contains("unnamed.ckpt: its model is not a model spec") &&
            Catch::Contains("resnet50"));

    const std::string garbage = scratch_path("garbage.ckpt");
    std::ofstream(garbage) << "not a checkpoint";
    CHECK_THROWS_WITH(tpu_export::export_checkpoint(garbage, scratch_path("g.onnx"), {}),
                      Catch::Contains("garbage.ckpt"));
}
