// SPDX-License-Identifier: MIT
// executable_test.cpp - executables without a device: an executable patched for any set of
// argument addresses is instruction for instruction the program the op compiler emits for
// those addresses (matmuls with strides, dense layers with and without bias, convolutions, a
// matmul split into several programs); its MAC and byte counts equal the op's; keys tell
// apart everything that changes the programs; addresses outside every argument and wrong
// argument counts are refused.
#include "engine_runner.hpp"

#include <tpurt/codegen/matmul_compiler.hpp>
#include <tpurt/codegen/op_executables.hpp>
#include <tpurt/error.hpp>
#include <tpurt/ops/conv2d.hpp>
#include <tpurt/ops/dense.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cstring>
#include <vector>

using runtime_test::engine_config;
using runtime_test::limits_of;
using tpurt::DType;
using tpurt::Executable;

namespace {

const tpurt::ArrayLimits card = limits_of(engine_config(128, 128, 8u << 20, 4u << 20));
const tpurt::ArrayLimits tiny = limits_of(engine_config(4, 4, 4096, 2048));
// bf16 needs K tiles of 32 (spec 1.3's blocks): the smallest array that can tile bf16's K.
const tpurt::ArrayLimits narrow = limits_of(engine_config(32, 8, 16384, 8192));

bool same_programs(const Executable &exe, std::span<const std::uint64_t> bases,
                   const std::vector<tpurt::Program> &expected) {
    if (exe.program_count() != expected.size())
        return false;
    for (std::size_t p = 0; p < expected.size(); ++p) {
        const tpurt::Program got = exe.patched(p, bases);
        if (got.insns.size() != expected[p].insns.size() ||
            std::memcmp(got.insns.data(), expected[p].insns.data(), got.size_bytes()) != 0)
            return false;
    }
    return true;
}

void check_matmul(tpurt::MatmulProblem problem, const tpurt::ArrayLimits &limits) {
    INFO(tpurt::executable_key(problem, limits));
    const Executable exe = tpurt::compile_executable(problem, limits);
    CHECK(exe.macs() == std::uint64_t{problem.m} * problem.k * problem.n);
    for (const std::array<std::uint64_t, 4> bases :
         {std::array<std::uint64_t, 4>{0x1000, 0x40000000, 0x7f0000010, 0x123456000},
          std::array<std::uint64_t, 4>{0x5550000, 0x100, 0x2000000, 0x9000}}) {
        problem.a_addr = bases[0];
        problem.b_addr = bases[1];
        problem.c_addr = bases[2];
        const bool bias = problem.epilogue && problem.epilogue->bias_addr;
        if (bias)
            problem.epilogue->bias_addr = bases[3];
        const tpurt::MatmulPlan plan = tpurt::compile_matmul(problem, limits);
        CHECK(same_programs(exe, std::span(bases.data(), bias ? 4 : 3), plan.programs));
    }
}

} // namespace

TEST_CASE("patched matmul executables are the compiler's programs", "[executable]") {
    check_matmul({.type = DType::Int8, .m = 300, .k = 200, .n = 500}, card);
    check_matmul({.type = DType::Bf16, .m = 17, .k = 33, .n = 9}, narrow);
    check_matmul({.type = DType::Fp32,
                  .m = 40,
                  .k = 50,
                  .n = 60,
                  .a_stride = 64 * 4,
                  .b_stride = 61 * 4,
                  .c_stride = 100 * 4},
                 card);
    // Big enough on the tiny card to need several programs.
    const Executable split = tpurt::compile_executable(
        tpurt::MatmulProblem{.type = DType::Int8, .m = 256, .k = 256, .n = 256}, tiny);
    CHECK(split.program_count() > 1);
    check_matmul({.type = DType::Int8, .m = 256, .k = 256, .n = 256}, tiny);
}

TEST_CASE("patched dense executables are the compiler's programs", "[executable]") {
    for (const bool bias : {false, true}) {
        tpurt::DenseLayer layer{.m = 70,
                                .k = 130,
                                .n = 150,
                                .in_type = DType::Bf16,
                                .out_type = DType::Bf16,
                                .activation = tpurt::Activation::Gelu,
                                .scale = 0.5f};
        check_matmul(tpurt::dense_problem(layer, 0, 0,
                                          bias ? std::optional<std::uint64_t>(0) : std::nullopt, 0),
                     card);
    }
}

TEST_CASE("patched conv2d executables are the compiler's programs", "[executable]") {
    const tpurt::Conv2dShape shape{.batch = 2,
                                   .height = 9,
                                   .width = 11,
                                   .channels = 5,
                                   .kernel_h = 3,
                                   .kernel_w = 3,
                                   .filters = 7,
                                   .stride_h = 2,
                                   .stride_w = 1,
                                   .pad_h = 1,
                                   .pad_w = 1};
    const Executable exe =
        tpurt::compile_executable(tpurt::Conv2dProblem{.type = DType::Fp32, .shape = shape}, card);
    // The two images stacked: slots of 12 padded rows, 6 output rows apart, so the MATMULs
    // walk 6 + 5 rows of 11 pixels.
    CHECK(exe.macs() == (6 + 5) * 11 * 7 * 3 * 3 * 5);
    const std::array<std::uint64_t, 3> bases{0x10000, 0x20000, 0x30000};
    const tpurt::Conv2dPlan plan = tpurt::compile_conv2d({.type = DType::Fp32,
                                                          .shape = shape,
                                                          .input_addr = 0x10000,
                                                          .weight_addr = 0x20000,
                                                          .output_addr = 0x30000},
                                                         card);
    CHECK(same_programs(exe, bases, plan.programs));
}

TEST_CASE("an executable counts the bytes its programs move", "[executable]") {
    // One tile: A and B in once, C out once.
    const Executable exe = tpurt::compile_executable(
        tpurt::MatmulProblem{.type = DType::Bf16, .m = 64, .k = 64, .n = 64}, card);
    CHECK(exe.bytes_moved() == 64 * 64 * 2 * 2 + 64 * 64 * 4);
    CHECK(exe.relocation_count() == 3);
    CHECK(exe.args().size() == 3);
    CHECK(exe.args()[0].bytes == 64 * 64 * 2);
}

TEST_CASE("executable keys tell apart what changes the programs", "[executable]") {
    const tpurt::MatmulProblem base{.type = DType::Bf16, .m = 8, .k = 16, .n = 32};
    const std::string key = tpurt::executable_key(base, card);
    tpurt::MatmulProblem dense_strides = base;
    dense_strides.a_stride = 16 * 2; // the same as 0
    CHECK(tpurt::executable_key(dense_strides, card) == key);
    tpurt::MatmulProblem addressed = base; // addresses are the arguments': not in the key
    addressed.a_addr = 0x1000;
    addressed.c_addr = 0x7f0000000;
    CHECK(tpurt::executable_key(addressed, card) == key);
    tpurt::MatmulProblem strided = base;
    strided.c_stride = 64 * 4;
    CHECK(tpurt::executable_key(strided, card) != key);
    tpurt::MatmulProblem fp32 = base;
    fp32.type = DType::Fp32;
    CHECK(tpurt::executable_key(fp32, card) != key);
    CHECK(tpurt::executable_key(base, tiny) != key);
    tpurt::MatmulProblem scaled = base;
    scaled.epilogue = tpurt::MatmulEpilogue{.scale = 0.25f};
    tpurt::MatmulProblem unscaled = scaled;
    unscaled.epilogue->scale = 0.5f;
    CHECK(tpurt::executable_key(scaled, card) != tpurt::executable_key(unscaled, card));
}

TEST_CASE("linking and patching refuse what does not fit", "[executable]") {
    tpurt::ProgramBuilder b;
    b.dma_in({.type = DType::Int8,
              .host_addr = Executable::placeholder(0) + 4096,
              .host_stride = 16,
              .local_addr = 0,
              .local_stride = 16,
              .rows = 1,
              .cols = 16});
    std::vector<tpurt::Program> programs{b.halt().finish()};
    // Argument 0 is only 4096 bytes: the DMA lies beyond it.
    CHECK_THROWS_AS(Executable::link("x", {{"A", 4096}}, programs), tpurt::Error);
    const Executable exe = Executable::link("x", {{"A", 8192}}, programs);
    const std::array<std::uint64_t, 2> two{1, 2};
    CHECK_THROWS_AS(exe.patched(0, two), tpurt::Error);
    const std::array<std::uint64_t, 1> one{0x100000};
    CHECK(exe.patched(0, one).insns[0].dma.host_addr == 0x100000 + 4096);
    std::vector<tpurt::Program> unplaced{
        tpurt::ProgramBuilder().timestamp(0x2000, 1).halt().finish()};
    CHECK_THROWS_AS(Executable::link("y", {{"A", 8192}}, unplaced), tpurt::Error);
}
