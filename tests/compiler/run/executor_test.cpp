// SPDX-License-Identifier: MIT
// executor_test.cpp - compiled models run on the CPU with the reference kernels against the
// ONNX models' meaning computed here by plain loops over ONNX's own layouts (NCHW images, OIHW
// and [N, K] weights, C, H, W flattening): the compiler's layout conversions, weight
// permutations, folding and fusion must keep every value.
#include "onnx_builder.hpp"

#include <tpu_onnx/compile.hpp>
#include <tpumodel/cpu_executor.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

using namespace compiler_test;

namespace {

void check_close(const std::vector<float> &got, const std::vector<float> &want) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("element " << i);
        CHECK(std::fabs(got[i] - want[i]) <= 1e-5f + 1e-4f * std::fabs(want[i]));
    }
}

std::vector<float> run(const OnnxBuilder &b, const std::string &file,
                       const std::vector<std::int64_t> &shape, const std::vector<float> &x) {
    tpu_onnx::CompileOptions options;
    options.input_shapes = {{"x", shape}};
    const tpumodel::Model m = tpu_onnx::compile_file(b.save(file), options).model;
    const std::vector<tpumodel::Tensor> out = tpumodel::cpu::run_model(m, {float_tensor(shape, x)});
    REQUIRE(out.size() == 1);
    return float_values(out[0]);
}

// y = x W^T + b (PyTorch's Linear), optionally ReLU, on rows of x.
std::vector<float> linear(const std::vector<float> &x, std::size_t rows, std::size_t in,
                          const std::vector<float> &w, const std::vector<float> &b, std::size_t out,
                          bool relu) {
    std::vector<float> y(rows * out);
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t o = 0; o < out; ++o) {
            double acc = b[o];
            for (std::size_t i = 0; i < in; ++i)
                acc += double(x[r * in + i]) * double(w[o * in + i]);
            y[r * out + o] = relu ? std::max(float(acc), 0.0f) : float(acc);
        }
    return y;
}

} // namespace

TEST_CASE("a compiled MLP computes what the ONNX model means", "[executor]") {
    OnnxBuilder b(13);
    b.input("x", {std::string("batch"), std::int64_t(16)})
        .floats("w1", {8, 16}, pattern(128, 1))
        .floats("b1", {8}, pattern(8, 2))
        .floats("w2", {4, 8}, pattern(32, 3))
        .floats("b2", {4}, pattern(4, 4))
        .node("Gemm", {"x", "w1", "b1"}, {"h"}, "fc1", {{"transB", std::int64_t(1)}})
        .node("Relu", {"h"}, {"r"}, "relu1")
        .node("Gemm", {"r", "w2", "b2"}, {"y"}, "fc2", {{"transB", std::int64_t(1)}})
        .output("y", 2);
    const std::vector<float> x = pattern(3 * 16, 10);
    const std::vector<float> h = linear(x, 3, 16, pattern(128, 1), pattern(8, 2), 8, true);
    const std::vector<float> want = linear(h, 3, 8, pattern(32, 3), pattern(4, 4), 4, false);
    check_close(run(b, "executor_mlp.onnx", {3, 16}, x), want);
}

TEST_CASE("a compiled CNN computes what the ONNX model means", "[executor]") {
    // x [2, 2, 6, 6] -> Conv 3x3x3 pad 1 + bias -> Relu -> MaxPool 2x2 -> Flatten -> Gemm 5.
    constexpr std::size_t N = 2, C = 2, H = 6, W = 6, F = 3, P = 3, O = 5;
    OnnxBuilder b(13);
    b.input("x", {std::string("batch"), std::int64_t(C), std::int64_t(H), std::int64_t(W)})
        .floats("w", {F, C, 3, 3}, pattern(F * C * 9, 5))
        .floats("bias", {F}, pattern(F, 6))
        .floats("fc_w", {O, F * P * P}, pattern(O * F * P * P, 7))
        .floats("fc_b", {O}, pattern(O, 8))
        .node("Conv", {"x", "w", "bias"}, {"c"}, "conv",
              {{"kernel_shape", std::vector<std::int64_t>{3, 3}},
               {"pads", std::vector<std::int64_t>{1, 1, 1, 1}}})
        .node("Relu", {"c"}, {"r"}, "relu")
        .node("MaxPool", {"r"}, {"p"}, "pool",
              {{"kernel_shape", std::vector<std::int64_t>{2, 2}},
               {"strides", std::vector<std::int64_t>{2, 2}}})
        .node("Flatten", {"p"}, {"f"}, "flatten")
        .node("Gemm", {"f", "fc_w", "fc_b"}, {"y"}, "fc", {{"transB", std::int64_t(1)}})
        .output("y", 2);

    const std::vector<float> x = pattern(N * C * H * W, 11), w = pattern(F * C * 9, 5),
                             bias = pattern(F, 6);
    // ONNX's meaning, NCHW throughout.
    std::vector<float> conv(N * F * H * W);
    for (std::size_t n = 0; n < N; ++n)
        for (std::size_t f = 0; f < F; ++f)
            for (std::size_t y = 0; y < H; ++y)
                for (std::size_t z = 0; z < W; ++z) {
                    double acc = bias[f];
                    for (std::size_t c = 0; c < C; ++c)
                        for (std::size_t ky = 0; ky < 3; ++ky)
                            for (std::size_t kx = 0; kx < 3; ++kx) {
                                const long iy = long(y + ky) - 1, ix = long(z + kx) - 1;
                                if (iy >= 0 && iy < long(H) && ix >= 0 && ix < long(W))
                                    acc += double(x[((n * C + c) * H + std::size_t(iy)) * W +
                                                    std::size_t(ix)]) *
                                           double(w[((f * C + c) * 3 + ky) * 3 + kx]);
                            }
                    conv[((n * F + f) * H + y) * W + z] = std::max(float(acc), 0.0f);
                }
    std::vector<float> pooled(N * F * P * P);
    for (std::size_t n = 0; n < N; ++n)
        for (std::size_t f = 0; f < F; ++f)
            for (std::size_t y = 0; y < P; ++y)
                for (std::size_t z = 0; z < P; ++z) {
                    float m = -INFINITY;
                    for (std::size_t dy = 0; dy < 2; ++dy)
                        for (std::size_t dx = 0; dx < 2; ++dx)
                            m = std::max(m, conv[((n * F + f) * H + 2 * y + dy) * W + 2 * z + dx]);
                    pooled[((n * F + f) * P + y) * P + z] = m; // flattened in C, H, W order
                }
    const std::vector<float> want =
        linear(pooled, N, F * P * P, pattern(O * F * P * P, 7), pattern(O, 8), O, false);
    check_close(run(b, "executor_cnn.onnx", {N, C, H, W}, x), want);
}

TEST_CASE("a folded PyTorch reshape chain computes what the ONNX model means", "[executor]") {
    OnnxBuilder b(13);
    b.input("x", {std::string("batch"), std::int64_t(3), std::int64_t(4)})
        .ints("zero", {}, {0})
        .ints("axes", {1}, {0})
        .ints("minus_one", {1}, {-1})
        .floats("w", {12, 2}, pattern(24, 9))
        .node("Shape", {"x"}, {"s"}, "shape")
        .node("Gather", {"s", "zero"}, {"n"}, "gather", {{"axis", std::int64_t(0)}})
        .node("Unsqueeze", {"n", "axes"}, {"n1"}, "unsqueeze")
        .node("Concat", {"n1", "minus_one"}, {"target"}, "concat", {{"axis", std::int64_t(0)}})
        .node("Reshape", {"x", "target"}, {"flat"}, "reshape")
        .node("MatMul", {"flat", "w"}, {"y"}, "matmul")
        .output("y", 2);
    const std::vector<float> x = pattern(5 * 12, 12), w = pattern(24, 9);
    std::vector<float> want(5 * 2);
    for (std::size_t r = 0; r < 5; ++r)
        for (std::size_t o = 0; o < 2; ++o) {
            double acc = 0;
            for (std::size_t i = 0; i < 12; ++i)
                acc += double(x[r * 12 + i]) * double(w[i * 2 + o]);
            want[r * 2 + o] = float(acc);
        }
    check_close(run(b, "executor_chain.onnx", {5, 3, 4}, x), want);
}

TEST_CASE("an image graph output comes back in ONNX's NCHW", "[executor]") {
    OnnxBuilder b(17);
    b.input("x", {std::int64_t(1), std::int64_t(1), std::int64_t(2), std::int64_t(3)})
        .floats("w", {2, 1, 1, 1}, {1.0f, -2.0f})
        .node("Conv", {"x", "w"}, {"y"}, "conv")
        .output("y", 4);
    const std::vector<float> x = {1, 2, 3, 4, 5, 6};
    check_close(run(b, "executor_image.onnx", {1, 1, 2, 3}, x),
                {1, 2, 3, 4, 5, 6, -2, -4, -6, -8, -10, -12});
}

TEST_CASE("images made by nodes that keep ONNX's layout reach the convolution in NHWC",
          "[executor]") {
    // x -> (x - 0.5) / 2 (scalars: NHWC) -> Mul by a per-channel [1, C, 1, 1] constant (ONNX's
    // layout: a transpose after it) -> Conv 1x1 -> y.
    OnnxBuilder b(17);
    b.input("x", {std::int64_t(1), std::int64_t(2), std::int64_t(2), std::int64_t(3)})
        .floats("half", {}, {0.5f})
        .floats("two", {}, {2.0f})
        .floats("scale", {1, 2, 1, 1}, {3.0f, -1.0f})
        .floats("w", {1, 2, 1, 1}, {1.0f, 10.0f})
        .node("Sub", {"x", "half"}, {"c"}, "sub")
        .node("Div", {"c", "two"}, {"n"}, "div")
        .node("Mul", {"n", "scale"}, {"s"}, "scale")
        .node("Conv", {"s", "w"}, {"y"}, "conv")
        .output("y", 4);
    const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    std::vector<float> want(6);
    for (std::size_t i = 0; i < 6; ++i)
        want[i] = 3.0f * ((x[i] - 0.5f) / 2.0f) + 10.0f * (-1.0f * ((x[6 + i] - 0.5f) / 2.0f));
    check_close(run(b, "executor_plain_images.onnx", {1, 2, 2, 3}, x), want);
}

TEST_CASE("a BatchNormalization after a Conv is folded into its weights", "[executor]") {
    // x [1, 2, 3, 3] -> Conv 1x1, 3 filters, bias -> BatchNormalization -> Relu -> y.
    OnnxBuilder b(15);
    const std::vector<float> w = pattern(6, 30), bias = pattern(3, 31), scale = {1.5f, -0.5f, 2.0f},
                             shift = {0.1f, 0.2f, -0.3f}, mean = {0.05f, -0.1f, 0.2f},
                             var = {0.5f, 2.0f, 0.25f};
    b.input("x", {std::int64_t(1), std::int64_t(2), std::int64_t(3), std::int64_t(3)})
        .floats("w", {3, 2, 1, 1}, w)
        .floats("bias", {3}, bias)
        .floats("scale", {3}, scale)
        .floats("shift", {3}, shift)
        .floats("mean", {3}, mean)
        .floats("var", {3}, var)
        .node("Conv", {"x", "w", "bias"}, {"c"}, "conv")
        .node("BatchNormalization", {"c", "scale", "shift", "mean", "var"}, {"n"}, "bn",
              {{"epsilon", 1e-3f}})
        .node("Relu", {"n"}, {"y"}, "relu")
        .output("y", 4);
    tpu_onnx::CompileOptions options;
    const tpu_onnx::Compiled c = tpu_onnx::compile_file(b.save("executor_bn.onnx"), options);
    CHECK(c.summary.batchnorms == 1);
    for (const tpumodel::Node &n : c.model.nodes)
        CHECK(n.op != "BatchNormalization");

    const std::vector<float> x = pattern(18, 32);
    std::vector<float> want(27);
    for (std::size_t f = 0; f < 3; ++f)
        for (std::size_t p = 0; p < 9; ++p) {
            const double conv =
                double(bias[f]) + double(x[p]) * w[f * 2] + double(x[9 + p]) * w[f * 2 + 1];
            const double n =
                (conv - mean[f]) / std::sqrt(double(var[f]) + 1e-3) * scale[f] + shift[f];
            want[f * 9 + p] = std::max(float(n), 0.0f);
        }
    const std::vector<tpumodel::Tensor> out =
        tpumodel::cpu::run_model(c.model, {float_tensor({1, 2, 3, 3}, x)});
    REQUIRE(out.size() == 1);
    check_close(float_values(out[0]), want);
}
