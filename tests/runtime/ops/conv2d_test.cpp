// SPDX-License-Identifier: MIT
// conv2d_test.cpp - convolutions compiled into row_group MATMULs and run on the engine equal
// the direct convolution bit for bit (int8, bf16 with values that round at every step, fp32):
// kernels 1x1 to 5x5, strides, zero padding, channels and filters beyond the array, batches,
// images split into several programs; and the direct convolution itself agrees with the
// independent matmul loop where a convolution is a matmul.
#include "engine_runner.hpp"

#include <tpu_test/reference.hpp>

#include <tpurt/error.hpp>
#include <tpurt/golden/reference_conv2d.hpp>
#include <tpurt/ops/conv2d.hpp>
#include <tpurt/testing/test_patterns.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using runtime_test::engine_config;
using runtime_test::run_conv2d_on_engine;
using tpurt::Conv2dShape;
using tpurt::DType;

namespace {

const tpu_engine_config default_card = engine_config(128, 128, 16u << 20, 8u << 20);

std::string describe(const Conv2dShape &s) {
    return std::to_string(s.batch) + "x" + std::to_string(s.height) + "x" +
           std::to_string(s.width) + "x" + std::to_string(s.channels) + " * " +
           std::to_string(s.kernel_h) + "x" + std::to_string(s.kernel_w) + "x" +
           std::to_string(s.filters) + " stride " + std::to_string(s.stride_h) + "," +
           std::to_string(s.stride_w) + " pad " + std::to_string(s.pad_h) + "," +
           std::to_string(s.pad_w);
}

template <typename In, typename Out>
std::size_t check(const tpu_engine_config &cfg, DType type, const Conv2dShape &s,
                  const std::vector<In> &input, const std::vector<In> &weights) {
    INFO(tpurt::dtype_name(type) << " " << describe(s) << " on " << cfg.mxu_rows << "x"
                                 << cfg.mxu_cols << ", UB " << cfg.ub_bytes << ", ACC "
                                 << cfg.acc_bytes);
    const auto run = run_conv2d_on_engine(cfg, type, s, input.data(), weights.data());
    std::vector<Out> ref(s.output_elements());
    tpurt::reference_conv2d(std::span<const In>(input), std::span<const In>(weights),
                            std::span<Out>(ref), s);
    REQUIRE(run.output.size() == ref.size() * sizeof(Out));
    for (std::size_t i = 0; i < ref.size(); ++i)
        if (std::memcmp(&run.output[i * sizeof(Out)], &ref[i], sizeof(Out)) != 0)
            FAIL("first mismatch at output element " << i << " (pixel " << i / s.filters
                                                     << ", filter " << i % s.filters << ")");
    // Stacked images also walk the output rows between them (computed, never written out).
    CHECK(run.macs >= std::uint64_t{s.batch} * s.out_height() * s.out_width() * s.kernel_h *
                          s.kernel_w * s.channels * s.filters);
    return run.plan.programs.size();
}

std::size_t check_int8(const tpu_engine_config &cfg, const Conv2dShape &s, std::uint64_t seed) {
    return check<std::int8_t, std::int32_t>(cfg, DType::Int8, s,
                                            tpurt::random_int8(s.input_elements(), seed),
                                            tpurt::random_int8(s.weight_elements(), seed + 1));
}

std::size_t check_bf16(const tpu_engine_config &cfg, const Conv2dShape &s, std::uint64_t seed) {
    return check<tpurt::Bf16, float>(cfg, DType::Bf16, s,
                                     tpurt::wide_range_bf16(s.input_elements(), seed),
                                     tpurt::wide_range_bf16(s.weight_elements(), seed + 1));
}

std::size_t check_fp32(const tpu_engine_config &cfg, const Conv2dShape &s, std::uint64_t seed) {
    return check<float, float>(cfg, DType::Fp32, s, tpurt::random_fp32(s.input_elements(), seed),
                               tpurt::random_fp32(s.weight_elements(), seed + 1));
}

const Conv2dShape shapes[] = {
    {.height = 1, .width = 1, .channels = 1, .filters = 1},
    {.height = 8,
     .width = 9,
     .channels = 3,
     .kernel_h = 3,
     .kernel_w = 3,
     .filters = 5,
     .pad_h = 1,
     .pad_w = 1},
    {.batch = 2,
     .height = 11,
     .width = 7,
     .channels = 4,
     .kernel_h = 3,
     .kernel_w = 2,
     .filters = 6,
     .stride_h = 2,
     .stride_w = 3,
     .pad_h = 2,
     .pad_w = 1},
    {.height = 12,
     .width = 12,
     .channels = 130,
     .kernel_h = 5,
     .kernel_w = 5,
     .filters = 140,
     .stride_h = 2,
     .stride_w = 2,
     .pad_h = 2,
     .pad_w = 2},
    {.height = 16,
     .width = 10,
     .channels = 16,
     .kernel_h = 1,
     .kernel_w = 1,
     .filters = 8,
     .stride_h = 3,
     .stride_w = 1},
};

} // namespace

TEST_CASE("int8 convolutions are exact", "[conv2d][int8]") {
    std::uint64_t seed = 1;
    for (const Conv2dShape &s : shapes)
        check_int8(default_card, s, seed++);
}

TEST_CASE("bf16 convolutions round like the direct loop in tap order", "[conv2d][bf16]") {
    std::uint64_t seed = 11;
    for (const Conv2dShape &s : shapes)
        check_bf16(default_card, s, seed++);
}

TEST_CASE("fp32 convolutions are exact", "[conv2d][fp32]") {
    check_fp32(default_card, shapes[1], 21);
    check_fp32(default_card, shapes[3], 22);
}

// K of the MATMULs of a compiled convolution (all the same here).
std::uint32_t matmul_k(const tpu_engine_config &cfg, DType type, const Conv2dShape &s) {
    const tpurt::Conv2dPlan plan = tpurt::compile_conv2d(
        {.type = type, .shape = s, .input_addr = 0, .weight_addr = 0, .output_addr = 0},
        runtime_test::limits_of(cfg));
    for (const tpurt::Program &program : plan.programs)
        for (const tpu_insn &insn : program.insns)
            if (insn.hdr.opcode == TPU_OP_MATMUL)
                return insn.mxu.cols;
    return 0;
}

TEST_CASE("one-channel convolutions compute several pixels a MATMUL row, bit for bit",
          "[conv2d][pack]") {
    // 28 x 28 x 1 into 32 filters (the demo's first layer): 4 pixels a row against a 4 x 128
    // tile; 6 pixels of 20 filters; a small card (8 x 8: 2 pixels of 4 filters); stride 2 down.
    struct Case {
        tpu_engine_config cfg;
        Conv2dShape s;
        std::uint32_t pixels; // a MATMUL row
    };
    const Case cases[] = {
        {default_card,
         {.batch = 3,
          .height = 28,
          .width = 28,
          .channels = 1,
          .kernel_h = 3,
          .kernel_w = 3,
          .filters = 32,
          .pad_h = 1,
          .pad_w = 1},
         4},
        {default_card,
         {.batch = 2,
          .height = 9,
          .width = 12,
          .channels = 1,
          .kernel_h = 5,
          .kernel_w = 3,
          .filters = 20,
          .stride_h = 2,
          .pad_h = 2,
          .pad_w = 1},
         6},
        {engine_config(8, 8, 4096, 2048),
         {.batch = 2,
          .height = 7,
          .width = 6,
          .channels = 1,
          .kernel_h = 3,
          .kernel_w = 3,
          .filters = 4,
          .pad_h = 1,
          .pad_w = 1},
         2},
    };
    std::uint64_t seed = 41;
    for (const Case &c : cases) {
        for (DType type : {DType::Int8, DType::Bf16, DType::Fp32})
            CHECK(matmul_k(c.cfg, type, c.s) == c.pixels);
        check_int8(c.cfg, c.s, seed++);
        check_bf16(c.cfg, c.s, seed++);
        check_fp32(c.cfg, c.s, seed++);
    }
}

// The packing's one difference (conv2d_compiler.cpp, pack_pixels()): an infinite input pixel
// makes the other pixels of the MATMUL rows that read it NaN (0 x inf), not only its own outputs.
TEST_CASE("one-channel packed convolution: an infinite input makes its MATMUL rows NaN",
          "[conv2d][pack]") {
    const Conv2dShape s{.height = 1, .width = 8, .channels = 1, .kernel_w = 1, .filters = 32};
    std::vector<tpurt::Bf16> input(8, tpurt::Bf16::from_float(1.0f));
    input[5] = tpurt::Bf16::from_float(std::numeric_limits<float>::infinity());
    const std::vector<tpurt::Bf16> weights(32, tpurt::Bf16::from_float(0.5f));
    const auto run =
        run_conv2d_on_engine(default_card, DType::Bf16, s, input.data(), weights.data());
    std::vector<float> out(8 * 32);
    std::memcpy(out.data(), run.output.data(), out.size() * 4);
    for (std::size_t pixel = 0; pixel < 8; ++pixel) {
        CAPTURE(pixel);
        // 4 pixels a row: pixels 4..7 share the row with pixel 5's infinity.
        CHECK(std::isnan(out[pixel * 32]) == (pixel >= 4 && pixel != 5));
        if (pixel < 4 || pixel == 5)
            CHECK(out[pixel * 32] == (pixel < 4 ? 0.5f : INFINITY));
    }
}

TEST_CASE("a small card splits images into blocks of output rows", "[conv2d][small]") {
    // 4x4 array (channel and filter tiles of 4), 96 bytes of accumulators (2 output rows of 3
    // pixels of a 4-filter tile), 256 bytes of unified buffer: 4 programs per image, blocks that
    // see only part of the padding.
    const tpu_engine_config cfg = engine_config(4, 4, 256, 96);
    const Conv2dShape s{.batch = 2,
                        .height = 7,
                        .width = 3,
                        .channels = 5,
                        .kernel_h = 3,
                        .kernel_w = 3,
                        .filters = 6,
                        .pad_h = 1,
                        .pad_w = 1};
    CHECK(check_int8(cfg, s, 31) == 2 * 4);
    // bf16 channel tiles are whole blocks of 32 channels: 5 channels need 5 array rows.
    CHECK(check_bf16(engine_config(8, 4, 256, 96), s, 32) == 2 * 4);
}

TEST_CASE("a batch of small images is stacked into one tall image per MATMUL", "[conv2d][stack]") {
    // 6 images of 5x5 with padding 1: slots of 7 padded rows, so one MATMUL per tap walks a
    // stack of 2 images as 7 + 5 output rows, of which the 2 between the images are dropped. A
    // batch of four or more images goes in at least four stacks (here three of ceil(6 / 4) = 2),
    // which take the two halves of the window and of the accumulators in turn.
    const Conv2dShape s{.batch = 6,
                        .height = 5,
                        .width = 5,
                        .channels = 3,
                        .kernel_h = 3,
                        .kernel_w = 3,
                        .filters = 4,
                        .pad_h = 1,
                        .pad_w = 1};
    const auto x = tpurt::wide_range_bf16(s.input_elements(), 51);
    const auto w = tpurt::wide_range_bf16(s.weight_elements(), 52);
    const auto run = run_conv2d_on_engine(default_card, DType::Bf16, s, x.data(), w.data());
    REQUIRE(run.plan.programs.size() == 1);
    std::size_t matmuls = 0;
    for (const union tpu_insn &insn : run.plan.programs[0].insns)
        if (insn.hdr.opcode == TPU_OP_MATMUL) {
            CHECK(insn.mxu.rows == (7 + 5) * 5);
            CHECK(insn.mxu.acc_addr == matmuls / 9 % 2 * (default_card.acc_bytes / 2));
            ++matmuls;
        }
    CHECK(matmuls == 3 * 9);
    CHECK(run.macs == 3 * std::uint64_t{7 + 5} * 5 * 9 * 3 * 4);
    std::vector<float> ref(s.output_elements());
    tpurt::reference_conv2d(std::span<const tpurt::Bf16>(x), std::span<const tpurt::Bf16>(w),
                            std::span<float>(ref), s);
    REQUIRE(std::memcmp(run.output.data(), ref.data(), run.output.size()) == 0);
    // Stacks cut by the accumulators (halves of 512 of 1,100 bytes: 1 image, 5 output rows of 5
    // pixels of a 4-filter tile, 400 bytes; 2 would need 960) and strides whose slots round the
    // padded height up (9 + 4 = 13 rows, slots of 14 = 7 output rows at stride 2).
    check_bf16(engine_config(128, 128, 1u << 16, 1100), s, 53);
    check_int8(default_card,
               {.batch = 5,
                .height = 9,
                .width = 6,
                .channels = 7,
                .kernel_h = 3,
                .kernel_w = 4,
                .filters = 9,
                .stride_h = 2,
                .stride_w = 2,
                .pad_h = 2,
                .pad_w = 1},
               54);
}

TEST_CASE("bf16 channel tiles are multiples of 32 but for the last", "[conv2d][bf16]") {
    // 70 channels on a 48-row array: tiles of 32, 32 and 6 channels per tap.
    const Conv2dShape s{.height = 5,
                        .width = 4,
                        .channels = 70,
                        .kernel_h = 3,
                        .kernel_w = 3,
                        .filters = 9,
                        .pad_h = 1,
                        .pad_w = 1};
    check_bf16(engine_config(48, 16, 1u << 16, 1u << 16), s, 33);
}

TEST_CASE("a 1x1 convolution is the independent matmul", "[conv2d][reference]") {
    const Conv2dShape s{.batch = 3, .height = 5, .width = 7, .channels = 33, .filters = 17};
    const std::uint32_t m = 3 * 5 * 7;
    const auto x = tpurt::wide_range_bf16(s.input_elements(), 41);
    const auto w = tpurt::wide_range_bf16(s.weight_elements(), 42);
    std::vector<float> conv(s.output_elements());
    tpurt::reference_conv2d(std::span<const tpurt::Bf16>(x), std::span<const tpurt::Bf16>(w),
                            std::span<float>(conv), s);
    const auto mm = tpu::test::reference_matmul_bf16(
        reinterpret_cast<const std::uint16_t *>(x.data()),
        reinterpret_cast<const std::uint16_t *>(w.data()), m, s.channels, s.filters);
    CHECK(std::memcmp(conv.data(), mm.data(), conv.size() * sizeof(float)) == 0);
}

TEST_CASE("conv2d rejects bad shapes and cards too small", "[conv2d][errors]") {
    const tpurt::ArrayLimits limits = runtime_test::limits_of(default_card);
    tpurt::Conv2dProblem p;
    p.shape = {.height = 4, .width = 4, .channels = 2, .kernel_h = 3, .kernel_w = 3, .filters = 2};
    SECTION("kernel larger than the padded image") {
        p.shape.kernel_h = 5;
        CHECK_THROWS_AS(tpurt::compile_conv2d(p, limits), tpurt::Error);
    }
    SECTION("zero stride") {
        p.shape.stride_w = 0;
        CHECK_THROWS_AS(tpurt::compile_conv2d(p, limits), tpurt::Error);
    }
    SECTION("int32 input") {
        p.type = DType::Int32;
        CHECK_THROWS_AS(tpurt::compile_conv2d(p, limits), tpurt::Error);
    }
    SECTION("bf16 channels beyond an array of fewer than 32 rows") {
        p.type = DType::Bf16;
        p.shape.channels = 20;
        try {
            tpurt::compile_conv2d(p, tpurt::ArrayLimits{16, 16, 1u << 20, 1u << 20});
            FAIL("bf16 channel tiles of 16 were accepted");
        } catch (const tpurt::Error &error) {
            CHECK(error.code() == tpurt::ErrorCode::Unsupported);
            CHECK(
                std::string(error.what()) ==
                "conv2d: bf16 with more than 16 channels needs a matrix unit of at least 32 rows");
        }
    }
    SECTION("a unified buffer smaller than the kernel's input rows") {
        try {
            tpurt::compile_conv2d(p, tpurt::ArrayLimits{128, 128, 16, 1u << 20});
            FAIL("a 16-byte unified buffer was accepted");
        } catch (const tpurt::Error &error) {
            CHECK(error.code() == tpurt::ErrorCode::Unsupported);
        }
    }
}
