// SPDX-License-Identifier: MIT
// onnxruntime_test.cpp - tpu-export's models run by ONNX Runtime (npm's CPU build, installed by
// tools/fetch-onnxruntime.sh and driven through tools/onnxruntime/ort-run.mjs), an executor
// independent of the stack: on the 10,000 Fashion-MNIST test images it must give the labels the
// stack's own CPU models give from the checkpoint (>= 99.9% agreement) with logits within
// 1e-4 + 1e-3 |ref| (ONNX Runtime sums convolutions and Gemms in its own order). PyTorch's
// exports (pytorch_models.py) run by ONNX Runtime give what PyTorch gives within
// 1e-5 + 1e-4 |ref|. Model specs (spec_models.hpp) exported: tpu_nn's CPU executor's labels
// and logits, as for the MLP and the CNN, on the digits' test set. The demo's CNN trained by the
// demo's trainer (demo_cnn.hpp) and exported: ONNX Runtime's labels are those of the native
// checkpoint on the card (bf16) on >= 99.9% of the test set. Hidden from the default run; ctest
// runs them as "compiler: ONNX Runtime ..." where CMake found node.
#include "demo_cnn.hpp"
#include "onnx_builder.hpp"
#include "pytorch_models.hpp"
#include "spec_models.hpp"

#include <tpu_data/dataset.hpp>
#include <tpu_export/export.hpp>
#include <tpu_infer/card_model.hpp>
#include <tpu_nn/cpu_executor.hpp>
#include <tpu_nn/spec.hpp>

#include <tpurt/device.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>

using namespace compiler_test;

namespace {

constexpr float mean = 0.2860f, stddev = 0.3530f;

std::string ort_install_dir() {
    const char *cache = std::getenv("TPU_CACHE");
    const std::string base =
        cache && *cache ? cache : std::string(std::getenv("HOME")) + "/.cache/tpu-stack";
    return base + "/onnxruntime-node-" TPU_ORT_VERSION;
}

// ONNX Runtime's output for `x` (raw pixels, `dims`) from the model at `onnx_path`.
std::vector<float> run_onnxruntime(const std::string &onnx_path, const std::string &dims,
                                   const std::vector<float> &x,
                                   const std::string &input = "input") {
    const std::string in = scratch_path("ort_in.f32"), out = scratch_path("ort_out.f32");
    std::ofstream(in, std::ios::binary)
        .write(reinterpret_cast<const char *>(x.data()), std::streamsize(x.size() * 4));
    const std::string cmd = "node " TPU_SOURCE_DIR "/tools/onnxruntime/ort-run.mjs '" +
                            ort_install_dir() + "' '" + onnx_path + "' " + input + " " + dims +
                            " '" + in + "' '" + out + "'";
    INFO(cmd << " (tools/fetch-onnxruntime.sh installs ONNX Runtime)");
    REQUIRE(std::system(cmd.c_str()) == 0);
    std::ifstream f(out, std::ios::binary);
    const std::vector<char> bytes{std::istreambuf_iterator<char>(f), {}};
    std::vector<float> y(bytes.size() / 4);
    std::copy_n(bytes.data(), y.size() * 4, reinterpret_cast<char *>(y.data()));
    return y;
}

// The stack's CPU model on the normalised images, `batch` at a time.
template <typename Model>
std::vector<float> native_logits(Model &model, const tpu_data::Dataset &d, std::size_t classes) {
    std::vector<float> logits;
    const std::size_t n = d.sample_size(), batch = 500;
    for (std::size_t i = 0; i < d.count; i += batch) {
        const std::size_t rows = std::min(batch, d.count - i);
        std::vector<float> x(d.features.begin() + std::ptrdiff_t(i * n),
                             d.features.begin() + std::ptrdiff_t((i + rows) * n));
        for (float &v : x)
            v = (v - mean) / stddev;
        const std::vector<float> &y = model.forward(x.data(), rows);
        logits.insert(logits.end(), y.begin(), y.begin() + std::ptrdiff_t(rows * classes));
    }
    return logits;
}

// How many rows of `got` and `want` (rows of `classes` logits) have the same label.
std::size_t same_labels(const std::vector<float> &got, const std::vector<float> &want,
                        std::size_t classes) {
    REQUIRE(got.size() == want.size());
    std::size_t same = 0;
    for (std::size_t r = 0; r < want.size() / classes; ++r) {
        auto label = [&](const std::vector<float> &l) {
            return std::max_element(l.begin() + std::ptrdiff_t(r * classes),
                                    l.begin() + std::ptrdiff_t((r + 1) * classes)) -
                   l.begin();
        };
        same += label(got) == label(want);
    }
    return same;
}

void check_agreement(const std::vector<float> &got, const std::vector<float> &want,
                     std::size_t classes) {
    const std::size_t same = same_labels(got, want, classes);
    std::size_t close = 0;
    for (std::size_t i = 0; i < want.size(); ++i)
        close += std::fabs(got[i] - want[i]) <= 1e-4f + 1e-3f * std::fabs(want[i]);
    const std::size_t images = want.size() / classes;
    INFO(same << " of " << images << " labels agree, " << close << " of " << want.size()
              << " logits within tolerance");
    CHECK(double(same) >= 0.999 * double(images));
    CHECK(close == want.size());
}

void save(tpu_model::Checkpoint &c, const std::string &path) {
    c.notes["input.mean"] = std::to_string(mean);
    c.notes["input.stddev"] = std::to_string(stddev);
    tpu_model::save_checkpoint(c, path);
}

void give_biases(std::vector<tpu_model::Param> params) {
    std::uint32_t seed = 300;
    for (tpu_model::Param &p : params)
        if (p.key.ends_with(".b"))
            *p.value = pattern(p.value->size(), seed++);
}

} // namespace

TEST_CASE("ONNX Runtime runs exported models as the stack does", "[.onnxruntime]") {
    const tpu_data::Dataset test = tpu_data::load_fashion_mnist(
        tpu_data::datasets_dir() + "/fashion-mnist", tpu_data::Split::test);
    const std::string count = std::to_string(test.count);

    SECTION("the MLP") {
        tpu_nn::CpuExecutor mlp(tpu_nn::graph_from_spec("mlp-784-64-10"), 21);
        give_biases(mlp.params());
        tpu_model::Checkpoint c;
        c.model = "mlp-784-64-10";
        mlp.save(c);
        save(c, scratch_path("ort_mlp.ckpt"));
        tpu_export::export_checkpoint(scratch_path("ort_mlp.ckpt"), scratch_path("ort_mlp.onnx"),
                                      {});
        check_agreement(
            run_onnxruntime(scratch_path("ort_mlp.onnx"), count + ",784", test.features),
            native_logits(mlp, test, 10), 10);
    }
    SECTION("the CNN") {
        tpu_nn::CpuExecutor cnn(tpu_nn::graph_from_spec("cnn-28x28x1-c16-c32-d128-10"), 22);
        give_biases(cnn.params());
        tpu_model::Checkpoint c;
        c.model = cnn.graph().name();
        c.notes["input.shape"] = "28x28x1";
        cnn.save(c);
        save(c, scratch_path("ort_cnn.ckpt"));
        tpu_export::export_checkpoint(scratch_path("ort_cnn.ckpt"), scratch_path("ort_cnn.onnx"),
                                      {});
        // Fashion-MNIST's one channel: NHWC and NCHW are the same bytes.
        check_agreement(
            run_onnxruntime(scratch_path("ort_cnn.onnx"), count + ",1,28,28", test.features),
            native_logits(cnn, test, 10), 10);
    }
}

TEST_CASE("ONNX Runtime runs exported model specs as tpu_nn's CPU executor does",
          "[.onnxruntime]") {
    const Digits &d = digits();
    const std::size_t images = d.test.count;
    for (const std::string &spec : digit_specs()) {
        INFO(spec);
        SpecModel model = trained_spec_model(spec);
        const std::string ckpt = scratch_path("ort_spec.ckpt"),
                          onnx = scratch_path("ort_spec.onnx");
        tpu_model::save_checkpoint(model.saved, ckpt);
        tpu_export::export_checkpoint(ckpt, onnx, {}); // onnx::checker and strict inference
        check_agreement(run_onnxruntime(onnx, std::to_string(images) + ",1,8,8", d.test.features),
                        model.logits(images), 10);
    }
}

TEST_CASE("ONNX Runtime runs PyTorch's exports as PyTorch does", "[.onnxruntime]") {
    for (const PytorchModel &p : pytorch_models()) {
        INFO(p.name);
        std::string dims;
        for (std::int64_t d : p.shape)
            dims += (dims.empty() ? "" : ",") + std::to_string(d);
        const std::vector<float> y = run_onnxruntime(p.onnx, dims, p.x, p.input);
        REQUIRE(y.size() == p.y.size());
        std::size_t off = 0;
        for (std::size_t i = 0; i < y.size(); ++i)
            off += !(std::fabs(y[i] - p.y[i]) <= 1e-5f + 1e-4f * std::fabs(p.y[i]));
        CHECK(off == 0);
    }
}

TEST_CASE("ONNX Runtime gives the labels of the demo's CNN on the card", "[.onnxruntime]") {
    const std::string ckpt = demo_cnn_checkpoint();
    const std::string onnx = scratch_path("ort_demo_cnn.onnx");
    tpu_export::export_checkpoint(ckpt, onnx, {});
    const tpu_data::Dataset test = tpu_data::load_fashion_mnist(
        tpu_data::datasets_dir() + "/fashion-mnist", tpu_data::Split::test);
    tpurt::Device dev = tpurt::Device::open_in_process({});
    const std::vector<float> native =
        tpu_infer::load_on_card(dev, tpu_infer::load_network(ckpt), 256)
            ->logits(test.features.data(), test.count);
    const std::vector<float> ort =
        run_onnxruntime(onnx, std::to_string(test.count) + ",1,28,28", test.features);
    const std::size_t same = same_labels(ort, native, 10);
    INFO(same << " of " << test.count << " labels agree");
    CHECK(double(same) >= 0.999 * double(test.count));
}
