// SPDX-License-Identifier: MIT
// precision_test.cpp - PyTorch's MLP, Fashion-MNIST CNN, torchvision's ResNet-18 and a
// transformer encoder layer (pytorch_models.py) compiled in fp32 and bf16 and run on the
// in-process card: equal to the CPU model of the card's arithmetic (tpumodel::card::reference_run)
// bit for bit; and the MLP and CNN compiled in bf16 and in int8 (calibrated on 500 training
// images): their labels on the 10,000 Fashion-MNIST test images within 1 point of the fp32
// versions' (>= 99% agreement).
#include "onnx_builder.hpp"
#include "pytorch_models.hpp"

#include <tpu_data/dataset.hpp>
#include <tpu_onnx/compile.hpp>
#include <tpumodel/card_executor.hpp>
#include <tpumodel/card_reference.hpp>

#include <tpurt/device.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>

using namespace compiler_test;

namespace {

const PytorchModel &pytorch_model(const std::string &name) {
    for (const PytorchModel &p : pytorch_models())
        if (p.name == name)
            return p;
    FAIL("pytorch_models.py made no " << name);
    throw;
}

// int8 is calibrated on the first 500 training images.
tpumodel::Model compile(const PytorchModel &p, tpumodel::Precision precision) {
    tpu_onnx::CompileOptions options;
    options.input_shapes = {{p.input, p.shape}};
    options.precision = precision;
    if (precision == tpumodel::Precision::Int8) {
        static const tpu_data::Dataset train = tpu_data::load_fashion_mnist(
            tpu_data::datasets_dir() + "/fashion-mnist", tpu_data::Split::train);
        options.calibration.assign(train.features.begin(),
                                   train.features.begin() + std::ptrdiff_t(500 * 784));
    }
    return tpu_onnx::compile_file(p.onnx, options).model;
}

// `images` test images (raw pixels), batch by batch of the model's input, as graph inputs.
std::vector<tpumodel::Tensor> batches(const PytorchModel &p, const tpu_data::Dataset &d,
                                      std::size_t images) {
    const std::size_t rows = std::size_t(p.shape[0]), n = d.sample_size();
    std::vector<tpumodel::Tensor> out;
    for (std::size_t i = 0; i + rows <= images; i += rows) {
        tpumodel::Tensor t =
            float_tensor(p.shape, {d.features.begin() + std::ptrdiff_t(i * n),
                                   d.features.begin() + std::ptrdiff_t((i + rows) * n)});
        t.name = p.input;
        out.push_back(std::move(t));
    }
    return out;
}

std::vector<std::size_t> labels(const std::vector<float> &logits) {
    std::vector<std::size_t> l;
    for (std::size_t r = 0; r < logits.size() / 10; ++r)
        l.push_back(std::size_t(std::max_element(logits.begin() + std::ptrdiff_t(r * 10),
                                                 logits.begin() + std::ptrdiff_t(r * 10 + 10)) -
                                logits.begin() - std::ptrdiff_t(r * 10)));
    return l;
}

const tpu_data::Dataset &test_set() {
    static const tpu_data::Dataset d = tpu_data::load_fashion_mnist(
        tpu_data::datasets_dir() + "/fashion-mnist", tpu_data::Split::test);
    return d;
}

// Model p compiled for `precision` on each of `inputs`, on the in-process card and by
// reference_run: CHECKs that no output value differs in a bit.
void check_bit_for_bit(tpurt::Device &dev, const PytorchModel &p, tpumodel::Precision precision,
                       const std::vector<tpumodel::Tensor> &inputs) {
    INFO(p.name << " in " << tpumodel::precision_name(precision));
    const tpumodel::Model m = compile(p, precision);
    tpumodel::card::Executor exe(dev, m);
    std::size_t differ = 0, values = 0;
    for (const tpumodel::Tensor &x : inputs) {
        const std::vector<float> card = float_values(exe.run({x}).at(0));
        const std::vector<float> cpu = float_values(tpumodel::card::reference_run(m, {x}).at(0));
        REQUIRE(card.size() == cpu.size());
        for (std::size_t i = 0; i < card.size(); ++i)
            differ += std::bit_cast<std::uint32_t>(card[i]) != std::bit_cast<std::uint32_t>(cpu[i]);
        values += card.size();
    }
    INFO(differ << " of " << values << " outputs differ");
    CHECK(differ == 0);
}

} // namespace

TEST_CASE("PyTorch's MLP and CNN on the card equal the CPU model of the card's arithmetic",
          "[card-reference]") {
    tpurt::Device dev = tpurt::Device::open_in_process({});
    for (const char *name : {"mlp", "cnn"})
        for (tpumodel::Precision precision : {tpumodel::Precision::Fp32, tpumodel::Precision::Bf16})
            check_bit_for_bit(dev, pytorch_model(name), precision,
                              batches(pytorch_model(name), test_set(), 40));
}

// pytorch_models.py's own samples (seeded): ResNet-18's 1x3x64x64 through its 41 card nodes,
// the encoder layer's 2x8x64 through its batched matmuls, softmax and layer norms.
TEST_CASE("ResNet-18 and a transformer layer on the card equal the CPU model of the card",
          "[card-reference]") {
    tpurt::Device dev = tpurt::Device::open_in_process({});
    for (const char *name : {"resnet18", "encoder"}) {
        const PytorchModel &p = pytorch_model(name);
        tpumodel::Tensor x = float_tensor(p.shape, p.x);
        x.name = p.input;
        for (tpumodel::Precision precision : {tpumodel::Precision::Fp32, tpumodel::Precision::Bf16})
            check_bit_for_bit(dev, p, precision, {x});
    }
}

TEST_CASE("bf16 and int8 versions of PyTorch's MLP and CNN agree with fp32 on Fashion-MNIST",
          "[precision]") {
    tpurt::Device dev = tpurt::Device::open_in_process({});
    for (const char *name : {"mlp", "cnn"}) {
        const PytorchModel &p = pytorch_model(name);
        std::vector<std::size_t> fp32_labels;
        for (tpumodel::Precision precision :
             {tpumodel::Precision::Fp32, tpumodel::Precision::Bf16, tpumodel::Precision::Int8}) {
            tpumodel::card::Executor exe(dev, compile(p, precision));
            std::vector<float> logits;
            for (const tpumodel::Tensor &x : batches(p, test_set(), test_set().count)) {
                const std::vector<float> y = float_values(exe.run({x}).at(0));
                logits.insert(logits.end(), y.begin(), y.end());
            }
            const std::vector<std::size_t> l = labels(logits);
            if (precision == tpumodel::Precision::Fp32) {
                fp32_labels = l;
                continue;
            }
            REQUIRE(l.size() == fp32_labels.size());
            std::size_t same = 0;
            for (std::size_t i = 0; i < l.size(); ++i)
                same += l[i] == fp32_labels[i];
            INFO(name << ": " << tpumodel::precision_name(precision) << " gives fp32's label on "
                      << same << " of " << l.size());
            CHECK(double(same) >= 0.99 * double(l.size()));
        }
    }
}

TEST_CASE("an int8 model runs its MatMuls and other ops in fp32", "[precision]") {
    tpurt::Device dev = tpurt::Device::open_in_process({});
    SECTION("a MatMul by constant weights") {
        OnnxBuilder b(13);
        b.input("x", {std::int64_t(4), std::int64_t(8)})
            .floats("w", {8, 3}, pattern(24, 40))
            .node("MatMul", {"x", "w"}, {"y"}, "mm")
            .output("y", 2);
        tpu_onnx::CompileOptions options;
        options.precision = tpumodel::Precision::Int8;
        options.calibration = pattern(32, 41);
        const tpumodel::Model m = tpu_onnx::compile_file(b.save("int8_matmul.onnx"), options).model;
        REQUIRE(m.nodes.at(0).card_op == "matmul");
        tpumodel::Model fp32 = m;
        fp32.precision = tpumodel::Precision::Fp32;
        tpumodel::card::Executor int8_exe(dev, m), fp32_exe(dev, fp32);
        const tpumodel::Tensor x = float_tensor({4, 8}, pattern(32, 41));
        CHECK(float_values(int8_exe.run({x}).at(0)) == float_values(fp32_exe.run({x}).at(0)));
    }
    // The transformer encoder layer: its attention's MatMuls multiply computed tensors, its
    // projections constant weights (the int8 layers), calibrated on its own input.
    SECTION("PyTorch's transformer encoder layer") {
        const PytorchModel &p = pytorch_model("encoder");
        tpu_onnx::CompileOptions options;
        options.input_shapes = {{p.input, p.shape}};
        options.precision = tpumodel::Precision::Int8;
        options.calibration = p.x;
        const tpumodel::Model m = tpu_onnx::compile_file(p.onnx, options).model;
        std::size_t calibrated = 0, matmuls = 0;
        for (const tpumodel::Node &n : m.nodes) {
            calibrated += n.find("calibrated_max") != nullptr;
            matmuls += n.placement == tpumodel::Placement::Card &&
                       (n.card_op == "matmul" || n.card_op == "batched_matmul");
        }
        CHECK(calibrated > 0);
        CHECK(matmuls > 0);
        tpumodel::card::Executor exe(dev, m);
        tpumodel::Tensor x = float_tensor(p.shape, p.x);
        x.name = p.input;
        const std::vector<float> y = float_values(exe.run({x}).at(0));
        REQUIRE(y.size() == p.y.size());
        float scale = 0, worst = 0;
        for (std::size_t i = 0; i < y.size(); ++i) {
            scale = std::max(scale, std::fabs(p.y[i]));
            worst = std::max(worst, std::fabs(y[i] - p.y[i]));
        }
        INFO("int8 differs from PyTorch's fp32 by at most " << worst << " of a scale of " << scale);
        CHECK(worst <= 0.05f * scale);
    }
}
