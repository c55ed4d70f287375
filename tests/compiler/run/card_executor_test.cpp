// SPDX-License-Identifier: MIT
// card_executor_test.cpp - compiled models run on a card (the engine in the process, the same
// code as the VM's card) by tpumodel::card::Executor against the CPU reference
// tpumodel::cpu::run_model(): an MLP, a CNN (NHWC convolution, pooling, the flatten folded into
// the dense layer's weights, NCHW input through a permute), a model with a CPU node between
// card nodes, repeated runs on the constants uploaded once, and refusals naming the node.
#include "onnx_builder.hpp"
#include "pytorch_models.hpp"

#include <tpu_onnx/compile.hpp>
#include <tpumodel/card_executor.hpp>
#include <tpumodel/cpu_executor.hpp>
#include <tpumodel/file.hpp>

#include <tpurt/device.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace compiler_test;

namespace {

tpumodel::Model compile(const OnnxBuilder &b, const std::string &file,
                        const std::vector<std::int64_t> &shape,
                        tpumodel::Precision precision = tpumodel::Precision::Fp32) {
    tpu_onnx::CompileOptions options;
    options.input_shapes = {{"x", shape}};
    options.precision = precision;
    return tpu_onnx::compile_file(b.save(file), options).model;
}

// The card's run of `m` on `x` against the CPU reference's: the same shapes, each element
// within `rel` times the output's largest magnitude of the reference's. 0 for bit-identical.
// Otherwise the card's fp32 matmuls and convolutions sum with fused multiply-adds in the
// array's order, and ACTIVATE's exp differs from libm's, where the reference rounds every
// product and sums in index order: the MLP and CNN below differ by at most 2.2e-7 of the
// output's scale (3.6 ulps of its largest value), and 1e-6 leaves room for that.
void check_against_cpu(const tpumodel::Model &m, const std::vector<std::int64_t> &shape,
                       const std::vector<float> &x, float rel) {
    tpurt::Device dev = tpurt::Device::open_in_process({});
    tpumodel::card::Executor exe(dev, m);
    const std::vector<tpumodel::Tensor> in = {float_tensor(shape, x)};
    const std::vector<tpumodel::Tensor> want = tpumodel::cpu::run_model(m, in);
    for (int round = 0; round < 2; ++round) { // constants and prepared ops are reused
        const std::vector<tpumodel::Tensor> got = exe.run(in);
        REQUIRE(got.size() == want.size());
        for (std::size_t o = 0; o < got.size(); ++o) {
            REQUIRE(got[o].shape == want[o].shape);
            const std::vector<float> g = float_values(got[o]), w = float_values(want[o]);
            float scale = 0;
            for (float v : w)
                scale = std::max(scale, std::fabs(v));
            for (std::size_t i = 0; i < g.size(); ++i) {
                INFO("output " << o << " element " << i << ": card " << g[i] << ", cpu " << w[i]);
                CHECK(std::fabs(g[i] - w[i]) <= rel * scale);
            }
        }
    }
}

OnnxBuilder mlp() {
    OnnxBuilder b(13);
    b.input("x", {std::string("batch"), std::int64_t(16)})
        .floats("w1", {32, 16}, pattern(512, 1))
        .floats("b1", {32}, pattern(32, 2))
        .floats("w2", {10, 32}, pattern(320, 3))
        .floats("b2", {10}, pattern(10, 4))
        .node("Gemm", {"x", "w1", "b1"}, {"h"}, "fc1", {{"transB", std::int64_t(1)}})
        .node("Relu", {"h"}, {"r"}, "relu1")
        .node("Gemm", {"r", "w2", "b2"}, {"l"}, "fc2", {{"transB", std::int64_t(1)}})
        .node("Softmax", {"l"}, {"y"}, "softmax", {{"axis", std::int64_t(-1)}})
        .output("y", 2);
    return b;
}

// x [N, 2, 8, 8] -> Conv 3x3 pad 1 + bias -> Relu -> MaxPool 2x2 -> Conv 3x3 stride 2 pad 1
// -> Relu -> AveragePool 2x2 -> Flatten -> Gemm 10.
OnnxBuilder cnn() {
    OnnxBuilder b(13);
    b.input("x", {std::string("batch"), std::int64_t(2), std::int64_t(8), std::int64_t(8)})
        .floats("w", {4, 2, 3, 3}, pattern(72, 5))
        .floats("bias", {4}, pattern(4, 6))
        .floats("w2", {6, 4, 3, 3}, pattern(216, 13))
        .floats("fc_w", {10, 6}, pattern(60, 7))
        .floats("fc_b", {10}, pattern(10, 8))
        .node("Conv", {"x", "w", "bias"}, {"c"}, "conv",
              {{"kernel_shape", std::vector<std::int64_t>{3, 3}},
               {"pads", std::vector<std::int64_t>{1, 1, 1, 1}}})
        .node("Relu", {"c"}, {"r"}, "relu")
        .node("MaxPool", {"r"}, {"p"}, "pool",
              {{"kernel_shape", std::vector<std::int64_t>{2, 2}},
               {"strides", std::vector<std::int64_t>{2, 2}}})
        .node("Conv", {"p", "w2"}, {"c2"}, "conv2",
              {{"kernel_shape", std::vector<std::int64_t>{3, 3}},
               {"strides", std::vector<std::int64_t>{2, 2}},
               {"pads", std::vector<std::int64_t>{1, 1, 1, 1}}})
        .node("Relu", {"c2"}, {"r2"}, "relu2")
        .node("AveragePool", {"r2"}, {"p2"}, "avgpool",
              {{"kernel_shape", std::vector<std::int64_t>{2, 2}},
               {"strides", std::vector<std::int64_t>{2, 2}}})
        .node("Flatten", {"p2"}, {"f"}, "flatten")
        .node("Gemm", {"f", "fc_w", "fc_b"}, {"y"}, "fc", {{"transB", std::int64_t(1)}})
        .output("y", 2);
    return b;
}

// NCHW in -> NHWC (permute) -> MaxPool 3x3 stride 1 pad 1 -> Relu -> NCHW out (permute).
OnnxBuilder exact() {
    OnnxBuilder b(13);
    b.input("x", {std::int64_t(2), std::int64_t(3), std::int64_t(5), std::int64_t(4)})
        .node("MaxPool", {"x"}, {"p"}, "pool",
              {{"kernel_shape", std::vector<std::int64_t>{3, 3}},
               {"pads", std::vector<std::int64_t>{1, 1, 1, 1}}})
        .node("Relu", {"p"}, {"y"}, "relu")
        .output("y", 4);
    return b;
}

// MatMul -> Pow (on the CPU: the card has no op for it) -> MatMul.
OnnxBuilder cpu_node() {
    OnnxBuilder b(13);
    b.input("x", {std::int64_t(4), std::int64_t(8)})
        .floats("w1", {8, 8}, pattern(64, 21))
        .floats("w2", {8, 3}, pattern(24, 22))
        .floats("two", {1}, {2.0f})
        .node("MatMul", {"x", "w1"}, {"h"}, "mm1")
        .node("Pow", {"h", "two"}, {"e"}, "pow")
        .node("MatMul", {"e", "w2"}, {"y"}, "mm2")
        .output("y", 2);
    return b;
}

// Relu -> Slice of columns 2..6 (one axis: a slice_copy on the card) -> Relu: exact throughout.
OnnxBuilder slice_of_columns() {
    OnnxBuilder b(13);
    b.input("x", {std::int64_t(4), std::int64_t(8)})
        .ints("starts", {1}, {2})
        .ints("ends", {1}, {-2})
        .ints("axes", {1}, {-1})
        .node("Relu", {"x"}, {"h"}, "relu_in")
        .node("Slice", {"h", "starts", "ends", "axes"}, {"s"}, "slice")
        .node("Relu", {"s"}, {"y"}, "relu")
        .output("y", 2);
    return b;
}

// x - max over axis 1 (kept), divided by x's sum over axis 1 (kept): Sub and Div of a [3, 1, 5]
// against [3, 4, 5], as ONNX's _expanded softmax writes them; exact throughout.
OnnxBuilder middle_axis_broadcast() {
    OnnxBuilder b(13);
    b.input("x", {std::int64_t(3), std::int64_t(4), std::int64_t(5)})
        .ints("axes", {1}, {1})
        .node("ReduceMax", {"x"}, {"max"}, "max", {{"axes", std::vector<std::int64_t>{1}}})
        .node("Sub", {"x", "max"}, {"d"}, "sub")
        .node("ReduceSum", {"x", "axes"}, {"sum"}, "sum")
        .node("Div", {"d", "sum"}, {"y"}, "div")
        .output("y", 3);
    return b;
}

// BatchNormalization of x [6, 3] with constant scale, shift and variance and the batch's own mean
// (a ReduceMean): split into Reshapes (views, of constants too) and elementwise ops.
OnnxBuilder batchnorm_of_batch_mean() {
    OnnxBuilder b(13);
    b.input("x", {std::int64_t(6), std::int64_t(3)})
        .floats("scale", {3}, {2.0f, 0.5f, 1.5f})
        .floats("shift", {3}, {1.0f, -1.0f, 0.25f})
        .floats("var", {3}, {3.99f, 0.24f, 1.0f})
        .node("ReduceMean", {"x"}, {"mean"}, "mean",
              {{"axes", std::vector<std::int64_t>{0}}, {"keepdims", std::int64_t(0)}})
        .node("BatchNormalization", {"x", "scale", "shift", "mean", "var"}, {"y"}, "bn",
              {{"epsilon", 0.01f}})
        .output("y", 2);
    return b;
}

// BatchNormalization of an image x [2, 3, 4, 5] with constant vectors (not after a Conv): its
// data NHWC, its k and b' [3] rows of the image's last axis.
const std::vector<float> bn_scale = {1.5f, -0.5f, 2.0f}, bn_shift = {0.1f, 0.2f, -0.3f},
                         bn_mean = {0.05f, -0.1f, 0.2f}, bn_var = {0.5f, 2.0f, 0.25f};
OnnxBuilder image_batchnorm() {
    OnnxBuilder b(15);
    b.input("x", {std::int64_t(2), std::int64_t(3), std::int64_t(4), std::int64_t(5)})
        .floats("scale", {3}, bn_scale)
        .floats("shift", {3}, bn_shift)
        .floats("mean", {3}, bn_mean)
        .floats("var", {3}, bn_var)
        .node("BatchNormalization", {"x", "scale", "shift", "mean", "var"}, {"y"}, "bn",
              {{"epsilon", 1e-3f}})
        .output("y", 4);
    return b;
}

std::size_t count_on(const tpumodel::Model &m, tpumodel::Placement p) {
    std::size_t n = 0;
    for (const tpumodel::Node &node : m.nodes)
        n += node.placement == p;
    return n;
}

} // namespace

TEST_CASE("a compiled MLP runs on the card as on the CPU", "[card]") {
    const tpumodel::Model m = compile(mlp(), "card_mlp.onnx", {5, 16});
    REQUIRE(count_on(m, tpumodel::Placement::Cpu) == 0);
    check_against_cpu(m, {5, 16}, pattern(5 * 16, 10), 1e-6f);
}

TEST_CASE("a compiled CNN runs on the card as on the CPU", "[card]") {
    const tpumodel::Model m = compile(cnn(), "card_cnn.onnx", {3, 2, 8, 8});
    REQUIRE(count_on(m, tpumodel::Placement::Cpu) == 0);
    check_against_cpu(m, {3, 2, 8, 8}, pattern(3 * 2 * 8 * 8, 11), 1e-6f);
}

TEST_CASE("permutes, pooling and ReLU on the card are bit-identical to the CPU's", "[card]") {
    const tpumodel::Model m = compile(exact(), "card_exact.onnx", {2, 3, 5, 4});
    REQUIRE(count_on(m, tpumodel::Placement::Cpu) == 0);
    REQUIRE(count_on(m, tpumodel::Placement::Card) == 4); // two permutes, pool, relu
    check_against_cpu(m, {2, 3, 5, 4}, pattern(120, 31), 0.0f);
}

TEST_CASE("a CPU node between card nodes gets its tensors off the card and back on", "[card]") {
    const tpumodel::Model m = compile(cpu_node(), "card_cpu_node.onnx", {4, 8});
    REQUIRE(count_on(m, tpumodel::Placement::Cpu) == 1);
    REQUIRE(count_on(m, tpumodel::Placement::Card) == 2);
    check_against_cpu(m, {4, 8}, pattern(32, 23), 1e-6f);
}

TEST_CASE("a Slice along one axis runs on the card as one copy, bit-identical to the CPU's",
          "[card]") {
    const tpumodel::Model m = compile(slice_of_columns(), "card_slice.onnx", {4, 8});
    REQUIRE(count_on(m, tpumodel::Placement::Cpu) == 0);
    check_against_cpu(m, {4, 8}, pattern(32, 26), 0.0f);
}

TEST_CASE("Sub and Div broadcast along a middle axis run on the card, bit-identical to the CPU's",
          "[card]") {
    const tpumodel::Model m = compile(middle_axis_broadcast(), "card_broadcast.onnx", {3, 4, 5});
    REQUIRE(count_on(m, tpumodel::Placement::Cpu) == 0);
    check_against_cpu(m, {3, 4, 5}, pattern(60, 27), 0.0f);
}

TEST_CASE("a BatchNormalization split into views and elementwise ops runs on the card", "[card]") {
    const tpumodel::Model m = compile(batchnorm_of_batch_mean(), "card_bn.onnx", {6, 3});
    REQUIRE(count_on(m, tpumodel::Placement::Cpu) == 0);
    check_against_cpu(m, {6, 3}, pattern(18, 28), 1e-5f);
}

TEST_CASE("a 4-D BatchNormalization with constant vectors runs on the card per channel", "[card]") {
    const tpumodel::Model m = compile(image_batchnorm(), "card_image_bn.onnx", {2, 3, 4, 5});
    for (const tpumodel::Node &n : m.nodes)
        if (n.placement == tpumodel::Placement::Cpu)
            UNSCOPED_INFO(n.describe() << " on the CPU: " << n.reason);
    REQUIRE(count_on(m, tpumodel::Placement::Cpu) == 0);
    const std::vector<float> x = pattern(120, 29);
    tpurt::Device dev = tpurt::Device::open_in_process({});
    tpumodel::card::Executor exe(dev, m);
    const std::vector<float> y = float_values(exe.run({float_tensor({2, 3, 4, 5}, x)}).at(0));
    REQUIRE(y.size() == x.size());
    for (std::size_t i = 0; i < x.size(); ++i) { // ONNX's meaning over NCHW, channel (i / 20) % 3
        const std::size_t c = (i / 20) % 3;
        const double want =
            (double(x[i]) - bn_mean[c]) / std::sqrt(double(bn_var[c]) + 1e-3) * bn_scale[c] +
            bn_shift[c];
        INFO("element " << i << ": card " << y[i] << ", ONNX " << want);
        CHECK(std::fabs(y[i] - want) <= 1e-5 + 1e-5 * std::fabs(want));
    }
}

TEST_CASE("a model compiled for bf16 runs its matmuls and convolutions on bf16 operands",
          "[card]") {
    tpurt::Device dev = tpurt::Device::open_in_process({});
    const std::vector<float> x = pattern(3 * 2 * 8 * 8, 11);
    const std::vector<tpumodel::Tensor> in = {float_tensor({3, 2, 8, 8}, x)};
    const tpumodel::Model fp32 = compile(cnn(), "card_cnn_fp32.onnx", {3, 2, 8, 8});
    const tpumodel::Model bf16 =
        compile(cnn(), "card_cnn_bf16.onnx", {3, 2, 8, 8}, tpumodel::Precision::Bf16);
    const std::vector<float> want = float_values(tpumodel::cpu::run_model(fp32, in)[0]);
    tpumodel::card::Executor exe(dev, bf16);
    const std::vector<float> got = float_values(exe.run(in)[0]);
    REQUIRE(got.size() == want.size());
    // bf16 keeps 8 significant bits: operands rounded by up to 2^-9 of themselves, products and
    // sums in fp32. Within 2% of the output's scale, and not the fp32 result.
    float scale = 0, largest = 0;
    for (float v : want)
        scale = std::max(scale, std::fabs(v));
    for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("element " << i << ": card bf16 " << got[i] << ", cpu fp32 " << want[i]);
        CHECK(std::fabs(got[i] - want[i]) <= 2e-2f * scale);
        largest = std::max(largest, std::fabs(got[i] - want[i]));
    }
    CHECK(largest > 1e-4f * scale);
}

TEST_CASE("PyTorch's exports run on the card as PyTorch computes them", "[card]") {
    tpurt::Device dev = tpurt::Device::open_in_process({});
    for (const PytorchModel &p : pytorch_models()) {
        INFO(p.name << " (" << p.onnx << ")");
        tpu_onnx::CompileOptions options;
        options.input_shapes = {{p.input, p.shape}};
        const tpumodel::Model m = tpu_onnx::compile_file(p.onnx, options).model;
        tpumodel::card::Executor exe(dev, m);
        const std::vector<tpumodel::Tensor> out = exe.run({float_tensor(p.shape, p.x)});
        REQUIRE(out.size() == 1);
        const std::vector<float> y = float_values(out[0]);
        REQUIRE(y.size() == p.y.size());
        std::size_t off = 0;
        for (std::size_t i = 0; i < y.size(); ++i)
            off += !(std::fabs(y[i] - p.y[i]) <= 1e-5f + 1e-4f * std::fabs(p.y[i]));
        CHECK(off == 0);
    }
}

TEST_CASE("the card's executor refuses what it cannot run, naming it", "[card]") {
    tpurt::Device dev = tpurt::Device::open_in_process({});
    tpumodel::Model m = compile(mlp(), "card_refusal.onnx", {2, 16});
    SECTION("inputs of another shape") {
        tpumodel::card::Executor exe(dev, m);
        REQUIRE_THROWS_WITH(exe.run({float_tensor({3, 16}, pattern(48, 1))}),
                            "input 'x' must be float32 [2, 16]");
    }
    SECTION("a card op it does not know") {
        m.nodes[0].card_op = "frobnicate";
        REQUIRE_THROWS_WITH((tpumodel::card::Executor(dev, m)),
                            Catch::Contains("node 'fc1' (Gemm)") &&
                                Catch::Contains("does not know this card op"));
    }
    SECTION("an int8 model's layer without its calibrated range") {
        m.precision = tpumodel::Precision::Int8;
        REQUIRE_THROWS_WITH((tpumodel::card::Executor(dev, m)),
                            Catch::Contains("node 'fc1' (Gemm)") &&
                                Catch::Contains("without this layer's calibrated range"));
    }
}

// Not a check: writes the models above, compiled, with their tolerances into $TPU_MODELS_OUT
// (models.txt: "name tolerance" per line) for the guest test that runs them on the real card
// (tests/guest/runtime/test_tpumodel.cpp, ctest vm_tpumodel after vm_tpumodel_models).
TEST_CASE("the card tests' models written for the VM", "[.vm-models]") {
    const char *dir = std::getenv("TPU_MODELS_OUT");
    REQUIRE(dir);
    std::filesystem::create_directories(dir);
    struct Entry {
        const char *name;
        OnnxBuilder builder;
        std::vector<std::int64_t> shape;
        float tolerance;
        tpumodel::Precision precision = tpumodel::Precision::Fp32;
    };
    const Entry entries[] = {{"mlp", mlp(), {5, 16}, 1e-6f},
                             {"cnn", cnn(), {3, 2, 8, 8}, 1e-6f},
                             {"exact", exact(), {2, 3, 5, 4}, 0.0f},
                             {"cpu_node", cpu_node(), {4, 8}, 1e-6f},
                             {"cnn_bf16", cnn(), {3, 2, 8, 8}, 2e-2f, tpumodel::Precision::Bf16}};
    std::ofstream list(std::string(dir) + "/models.txt");
    for (const Entry &e : entries) {
        tpumodel::save(
            compile(e.builder, std::string("vm_") + e.name + ".onnx", e.shape, e.precision),
            std::string(dir) + "/" + e.name + ".tpumodel");
        list << e.name << ' ' << e.tolerance << '\n';
    }
    REQUIRE(list.flush());
}
