// SPDX-License-Identifier: MIT
// quant_test.cpp - ONNX's quantised ops compiled by tpu-compile and run by the CPU kernels and
// on a card (the engine in the process): QuantizeLinear's rounding (half to even) and
// saturation against values worked out by hand, and MatMulInteger, QLinearMatMul, ConvInteger
// and QLinearConv on the card bit for bit against the CPU kernels on pseudo-random uint8 and
// int8 data, with the zero points and weights that make the card split its weights into two
// and three int8 parts, per-column zero points and scales, a batch, strides and padding
// (QLinearConv's with an input zero point that is not the card's 0 too); sums too large for the
// card's epilogue on the CPU.
#include "onnx_builder.hpp"

#include <tpu_onnx/compile.hpp>
#include <tpumodel/card_executor.hpp>
#include <tpumodel/cpu_executor.hpp>

#include <tpurt/device.hpp>

#include <catch2/catch.hpp>

#include <cstring>

using namespace compiler_test;
using Ints = std::vector<std::int64_t>;

namespace {

constexpr int u8 = onnx::TensorProto_DataType_UINT8;
constexpr int i8 = onnx::TensorProto_DataType_INT8;
constexpr int i32 = onnx::TensorProto_DataType_INT32;

// n pseudo-random values of an 8-bit dtype covering its whole range, its ends included.
std::vector<std::int64_t> bytes(std::size_t n, int dtype, std::uint32_t seed) {
    const std::vector<float> p = pattern(n, seed);
    const std::int64_t lo = dtype == u8 ? 0 : -128;
    std::vector<std::int64_t> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = i % 7 == 0 ? lo + 255 * std::int64_t(i % 2) : lo + std::int64_t((p[i] + 1) * 127.9f);
    return v;
}

tpumodel::Tensor data(const std::vector<std::int64_t> &shape, int dtype,
                      const std::vector<std::int64_t> &values) {
    tpumodel::Tensor t{"x",
                       dtype == u8 ? tpumodel::DType::Uint8 : tpumodel::DType::Int8,
                       tpumodel::Layout::Plain,
                       shape,
                       false,
                       {}};
    for (std::int64_t v : values)
        t.data.push_back(std::uint8_t(v));
    return t;
}

tpumodel::Model compile(const OnnxBuilder &b, const std::string &file) {
    return tpu_onnx::compile_file(b.save(file), {}).model;
}

// `m` on the card (every node there) and by the CPU kernels on `x`: the same bytes. The output.
tpumodel::Tensor card_equals_cpu(const tpumodel::Model &m, const tpumodel::Tensor &x) {
    tpurt::Device dev = tpurt::Device::open_in_process({});
    tpumodel::card::Executor exe(dev, m);
    CHECK(exe.cpu_nodes() == 0);
    const std::vector<tpumodel::Tensor> want = tpumodel::cpu::run_model(m, {x});
    const std::vector<tpumodel::Tensor> got = exe.run({x});
    REQUIRE(got.size() == 1);
    REQUIRE(got[0].dtype == want[0].dtype);
    REQUIRE(got[0].shape == want[0].shape);
    for (std::size_t i = 0; i < got[0].data.size(); ++i) {
        INFO("byte " << i);
        REQUIRE(got[0].data[i] == want[0].data[i]);
    }
    return got[0];
}

} // namespace

TEST_CASE("QuantizeLinear rounds half to even and saturates, on the CPU and the card", "[quant]") {
    const std::vector<float> x = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 3.75f, 1e9f, -1e9f};
    for (const int dtype : {u8, i8}) {
        OnnxBuilder b(13);
        b.input("x", {std::int64_t(9)}).floats("s", {}, {0.5f});
        b.ints("z", {}, {dtype == u8 ? 128 : 0}, dtype);
        b.node("QuantizeLinear", {"x", "s", "z"}, {"y"}, "q").output("y", 1, dtype);
        const tpumodel::Model m = compile(b, "quantize.onnx");
        // x / 0.5: 1, 3, 5, -1, -3, -5, 7.5, 2e9, -2e9; half to even: 7.5 -> 8.
        std::vector<std::int64_t> want = {1, 3, 5, -1, -3, -5, 8, 127, -128};
        tpurt::Device dev = tpurt::Device::open_in_process({});
        tpumodel::card::Executor exe(dev, m);
        REQUIRE(exe.cpu_nodes() == 0);
        for (const std::vector<tpumodel::Tensor> &y :
             {tpumodel::cpu::run_model(m, {float_tensor({9}, x)}), exe.run({float_tensor({9}, x)})})
            for (std::size_t i = 0; i < want.size(); ++i) {
                const std::int64_t v = dtype == u8 ? std::int64_t(y[0].data[i]) - 128
                                                   : std::int64_t(std::int8_t(y[0].data[i]));
                INFO((dtype == u8 ? "uint8" : "int8") << " element " << i);
                CHECK(v == want[i]);
            }
    }
    // x / 1 rounds 0.5 to 0 and 2.5 to 2.
    OnnxBuilder b(13);
    b.input("x", {std::int64_t(2)}).floats("s", {}, {1.0f});
    b.node("QuantizeLinear", {"x", "s"}, {"y"}, "q").output("y", 1, u8);
    const std::vector<tpumodel::Tensor> y = tpumodel::cpu::run_model(
        compile(b, "quantize_default.onnx"), {float_tensor({2}, {0.5f, 2.5f})});
    CHECK(y[0].data == std::vector<std::uint8_t>{0, 2});
}

TEST_CASE("MatMulInteger and QLinearMatMul on the card equal the CPU kernels", "[quant][card]") {
    // K = 300: zero points 0 and 255 (uint8) and -128 (int8) put 255 among the centred weights
    // (three int8 parts); 37 keeps two.
    for (const int dtype : {u8, i8})
        for (const std::int64_t zb : {dtype == u8 ? 0 : -128, 37}) {
            const std::int64_t za = dtype == u8 ? 255 : 100;
            INFO((dtype == u8 ? "uint8" : "int8") << ", B's zero point " << zb);
            OnnxBuilder mi(13);
            mi.input("x", {std::int64_t(2), std::int64_t(3), std::int64_t(300)}, dtype);
            mi.ints("b", {300, 5}, bytes(1500, dtype, 2), dtype);
            mi.ints("za", {}, {za}, dtype);
            mi.ints("zb", {5}, {zb, zb, 3, zb, 1}, dtype); // per column
            mi.node("MatMulInteger", {"x", "b", "za", "zb"}, {"y"}, "mm").output("y", 3, i32);
            const tpumodel::Tensor x = data({2, 3, 300}, dtype, bytes(1800, dtype, 1));
            card_equals_cpu(compile(mi, "matmul_integer.onnx"), x);

            // QLinearMatMul of a batch of two by a batch of two; K = 40 keeps the epilogue's
            // sums below 2^24.
            OnnxBuilder q(13);
            q.input("x", {std::int64_t(2), std::int64_t(3), std::int64_t(40)}, dtype)
                .floats("sa", {}, {0.0213f})
                .floats("sb", {}, {0.0071f})
                .floats("sy", {}, {0.613f});
            q.ints("b", {2, 40, 6}, bytes(480, dtype, 3), dtype);
            q.ints("za", {}, {za}, dtype);
            q.ints("zb", {}, {zb}, dtype);
            q.ints("zy", {}, {dtype == u8 ? 119 : -9}, dtype);
            q.node("QLinearMatMul", {"x", "sa", "za", "b", "sb", "zb", "sy", "zy"}, {"y"}, "q")
                .output("y", 3, dtype);
            const tpumodel::Tensor y = card_equals_cpu(
                compile(q, "qlinear_matmul.onnx"), data({2, 3, 40}, dtype, bytes(240, dtype, 4)));
            // Not one value everywhere: the requantised results spread over the range.
            CHECK(std::count(y.data.begin(), y.data.end(), y.data[0]) < 30);
        }
}

TEST_CASE("ConvInteger and QLinearConv on the card equal the CPU kernels", "[quant][card]") {
    for (const int dtype : {u8, i8}) {
        INFO((dtype == u8 ? "uint8" : "int8"));
        // ConvInteger padded by 1 and strided by 2 with an input zero point that is not the
        // card's 0, per-filter weight zero points with 255 among the centred weights.
        OnnxBuilder c(13);
        c.input("x", {std::int64_t(2), std::int64_t(4), std::int64_t(7), std::int64_t(6)}, dtype);
        c.ints("w", {3, 4, 3, 3}, bytes(108, dtype, 5), dtype);
        c.ints("zx", {}, {dtype == u8 ? 77 : -77}, dtype);
        c.ints("zw", {3}, {dtype == u8 ? 0 : -128, 5, 200 - (dtype == i8) * 128}, dtype);
        c.node("ConvInteger", {"x", "w", "zx", "zw"}, {"y"}, "conv",
               {{"pads", std::vector<std::int64_t>{1, 1, 1, 1}},
                {"strides", std::vector<std::int64_t>{2, 2}}})
            .output("y", 4, i32);
        const tpumodel::Tensor x = data({2, 4, 7, 6}, dtype, bytes(336, dtype, 6));
        card_equals_cpu(compile(c, "conv_integer.onnx"), x);

        // QLinearConv unpadded with an int32 bias.
        OnnxBuilder q(13);
        q.input("x", {std::int64_t(2), std::int64_t(4), std::int64_t(7), std::int64_t(6)}, dtype)
            .floats("sx", {}, {0.05f})
            .floats("sw", {}, {0.011f})
            .floats("sy", {}, {0.9f});
        q.ints("w", {3, 4, 3, 3}, bytes(108, dtype, 7), dtype);
        q.ints("zx", {}, {dtype == u8 ? 130 : 3}, dtype);
        q.ints("zw", {}, {dtype == u8 ? 255 : 127}, dtype);
        q.ints("zy", {}, {dtype == u8 ? 128 : 0}, dtype);
        q.ints("bias", {3}, {-4000, 0, 2500}, i32);
        q.node("QLinearConv", {"x", "sx", "zx", "w", "sw", "zw", "sy", "zy", "bias"}, {"y"}, "qc")
            .output("y", 4, dtype);
        const tpumodel::Tensor y = card_equals_cpu(compile(q, "qlinear_conv.onnx"), x);
        CHECK(std::count(y.data.begin(), y.data.end(), y.data[0]) < 40);

        // Padded, with an input zero point that is not the card's 0 (uint8 77 is -51 there, int8
        // -77): the card pads the image with it itself; a scale per filter.
        OnnxBuilder p(13);
        p.input("x", {std::int64_t(2), std::int64_t(4), std::int64_t(7), std::int64_t(6)}, dtype)
            .floats("sx", {}, {0.05f})
            .floats("sw", {3}, {0.011f, 0.02f, 0.005f})
            .floats("sy", {}, {0.9f});
        p.ints("w", {3, 4, 3, 3}, bytes(108, dtype, 7), dtype);
        p.ints("zx", {}, {dtype == u8 ? 77 : -77}, dtype);
        p.ints("zw", {}, {dtype == u8 ? 3 : -125}, dtype);
        p.ints("zy", {}, {dtype == u8 ? 128 : 0}, dtype);
        p.node("QLinearConv", {"x", "sx", "zx", "w", "sw", "zw", "sy", "zy"}, {"y"}, "qc",
               {{"pads", std::vector<std::int64_t>{1, 2, 1, 2}},
                {"strides", std::vector<std::int64_t>{2, 1}}})
            .output("y", 4, dtype);
        card_equals_cpu(compile(p, "qlinear_conv_padded.onnx"), x);
    }
}

TEST_CASE("QLinearMatMul with a scale per column on the card, and sums too large for it on the CPU",
          "[quant]") {
    for (const bool large : {false, true}) {
        // K = 300 with every centred weight 255 makes sums the epilogue's binary32 cannot hold;
        // K = 4 with pseudo-random weights and a scale per column of B runs on the card.
        const std::int64_t k = large ? 300 : 4;
        OnnxBuilder q(13);
        q.input("x", {std::int64_t(2), k}, u8)
            .floats("sa", {}, {0.02f})
            .floats("sb", {3}, {0.01f, 0.02f, 0.03f})
            .floats("sy", {}, {0.05f});
        q.ints("b", {k, 3}, large ? Ints(std::size_t(k) * 3, 255) : bytes(12, u8, 9), u8);
        q.ints("za", {}, {128}, u8);
        q.ints("zb", {}, {0}, u8);
        q.ints("zy", {}, {128}, u8);
        q.node("QLinearMatMul", {"x", "sa", "za", "b", "sb", "zb", "sy", "zy"}, {"y"}, "q")
            .output("y", 2, u8);
        const tpumodel::Model m = compile(q, "qlinear_matmul_per_column.onnx");
        const tpumodel::Tensor x = data({2, k}, u8, bytes(std::size_t(2 * k), u8, 10));
        if (!large) {
            const tpumodel::Tensor y = card_equals_cpu(m, x);
            CHECK(std::count(y.data.begin(), y.data.end(), y.data[0]) < 6);
            continue;
        }
        CHECK(m.nodes[0].placement == tpumodel::Placement::Cpu);
        CHECK(m.nodes[0].reason == "sums of 2^24 or more: the card's epilogue adds in binary32");
        CHECK(tpumodel::cpu::run_model(m, {x})[0].shape == std::vector<std::int64_t>{2, 3});
    }
}
