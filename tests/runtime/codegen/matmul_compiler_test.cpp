// SPDX-License-Identifier: MIT
// matmul_compiler_test.cpp - the matmul compiler's programs, run on the engine, equal the
// independent reference loops bit for bit: int8, bf16 and fp32, from 1x1x1 to 300x200x500, on the
// default 128x128 card and on a 4x4 array with tiny memories that forces every tiling path,
// with padded strides, and split into several programs when one would exceed 1 MiB.
#include "engine_runner.hpp"

#include <tpu_test/random_data.hpp>
#include <tpu_test/reference.hpp>

#include <tpurt/error.hpp>
#include <tpurt/testing/test_patterns.hpp>

#include <catch2/catch.hpp>

#include <bit>
#include <cstring>
#include <random>
#include <string>

using runtime_test::engine_config;
using runtime_test::run_matmul_on_engine;

namespace {

struct Shape {
    std::uint32_t m, k, n;
};

const tpu_engine_config default_card = engine_config(128, 128, 16u << 20, 8u << 20);

template <typename T> std::vector<T> as_vector(const std::vector<std::byte> &bytes) {
    std::vector<T> out(bytes.size() / sizeof(T));
    std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
}

// Index of the first differing element (bitwise for floats), or -1.
template <typename T> long first_mismatch(const std::vector<T> &card, const std::vector<T> &ref) {
    REQUIRE(card.size() == ref.size());
    for (std::size_t i = 0; i < card.size(); ++i) {
        if (std::memcmp(&card[i], &ref[i], sizeof(T)) != 0)
            return static_cast<long>(i);
    }
    return -1;
}

// Every plan keeps its tiles within the array and its working set within the memories.
void check_plan(const tpurt::MatmulPlan &plan, const tpu_engine_config &cfg, tpurt::DType type,
                std::size_t max_program_bytes) {
    const tpurt::MatmulTiling &t = plan.tiling;
    const std::uint64_t elem = tpurt::element_size(type);
    CHECK(t.tile_k <= cfg.mxu_rows);
    CHECK(t.tile_n <= cfg.mxu_cols);
    CHECK(t.tile_m <= t.block_m);
    CHECK(t.group_n >= 1);
    CHECK(t.acc_stride == std::uint64_t{t.group_n} * t.tile_n * 4);
    CHECK(t.ub_a_offset >= std::uint64_t{t.tile_k} * t.tile_n * elem);
    CHECK(t.ub_a_offset + std::uint64_t{t.tile_m} * t.tile_k * elem <= cfg.ub_bytes);
    CHECK(std::uint64_t{t.block_m} * t.acc_stride <= cfg.acc_bytes);
    for (const tpurt::Program &program : plan.programs) {
        REQUIRE(!program.insns.empty());
        CHECK(program.size_bytes() <= max_program_bytes);
        CHECK(program.insns.back().hdr.opcode == TPU_OP_HALT);
    }
}

tpurt::MatmulPlan check_int8(const tpu_engine_config &cfg, const Shape &s, std::uint64_t seed,
                             const runtime_test::RowPadding &padding = {},
                             std::size_t max_program_bytes = TPU_PROGRAM_MAX_BYTES) {
    INFO("int8 " << s.m << "x" << s.k << "x" << s.n << " on " << cfg.mxu_rows << "x" << cfg.mxu_cols
                 << ", UB " << cfg.ub_bytes << ", ACC " << cfg.acc_bytes);
    std::mt19937_64 rng(seed);
    const auto a = tpu::test::random_int8(rng, std::uint64_t{s.m} * s.k);
    const auto b = tpu::test::random_int8(rng, std::uint64_t{s.k} * s.n);
    auto run = run_matmul_on_engine(cfg, tpurt::DType::Int8, s.m, s.k, s.n, a.data(), b.data(),
                                    padding, max_program_bytes);
    const auto card = as_vector<std::int32_t>(run.c);
    const auto ref = tpu::test::reference_matmul_int8(a.data(), b.data(), s.m, s.k, s.n);
    CHECK(first_mismatch(card, ref) == -1);
    CHECK(run.macs == std::uint64_t{s.m} * s.k * s.n);
    check_plan(run.plan, cfg, tpurt::DType::Int8, max_program_bytes);
    return run.plan;
}

tpurt::MatmulPlan check_bf16(const tpu_engine_config &cfg, const Shape &s,
                             const std::vector<tpurt::Bf16> &a, const std::vector<tpurt::Bf16> &b,
                             const runtime_test::RowPadding &padding = {}) {
    INFO("bf16 " << s.m << "x" << s.k << "x" << s.n << " on " << cfg.mxu_rows << "x" << cfg.mxu_cols
                 << ", UB " << cfg.ub_bytes << ", ACC " << cfg.acc_bytes);
    auto run =
        run_matmul_on_engine(cfg, tpurt::DType::Bf16, s.m, s.k, s.n, a.data(), b.data(), padding);
    const auto card = as_vector<float>(run.c);
    const auto ref = tpu::test::reference_matmul_bf16(
        reinterpret_cast<const std::uint16_t *>(a.data()),
        reinterpret_cast<const std::uint16_t *>(b.data()), s.m, s.k, s.n);
    const long bad = first_mismatch(card, ref);
    if (bad >= 0)
        FAIL("C[" << bad / s.n << "][" << bad % s.n << "]: card " << card[bad] << " reference "
                  << ref[bad]);
    CHECK(run.macs == std::uint64_t{s.m} * s.k * s.n);
    check_plan(run.plan, cfg, tpurt::DType::Bf16, TPU_PROGRAM_MAX_BYTES);
    return run.plan;
}

tpurt::MatmulPlan check_bf16(const tpu_engine_config &cfg, const Shape &s, std::uint64_t seed,
                             const runtime_test::RowPadding &padding = {}) {
    return check_bf16(cfg, s, tpurt::wide_range_bf16(std::size_t{s.m} * s.k, seed),
                      tpurt::wide_range_bf16(std::size_t{s.k} * s.n, seed + 1), padding);
}

tpurt::MatmulPlan check_fp32(const tpu_engine_config &cfg, const Shape &s, std::uint64_t seed,
                             const runtime_test::RowPadding &padding = {}) {
    INFO("fp32 " << s.m << "x" << s.k << "x" << s.n << " on " << cfg.mxu_rows << "x" << cfg.mxu_cols
                 << ", UB " << cfg.ub_bytes << ", ACC " << cfg.acc_bytes);
    const auto a = tpurt::random_fp32(std::size_t{s.m} * s.k, seed);
    const auto b = tpurt::random_fp32(std::size_t{s.k} * s.n, seed + 1);
    auto run =
        run_matmul_on_engine(cfg, tpurt::DType::Fp32, s.m, s.k, s.n, a.data(), b.data(), padding);
    const auto card = as_vector<float>(run.c);
    const auto ref = tpu::test::reference_matmul_fp32(a.data(), b.data(), s.m, s.k, s.n);
    const long bad = first_mismatch(card, ref);
    if (bad >= 0)
        FAIL("C[" << bad / s.n << "][" << bad % s.n << "]: card " << card[bad] << " reference "
                  << ref[bad]);
    CHECK(run.macs == std::uint64_t{s.m} * s.k * s.n);
    check_plan(run.plan, cfg, tpurt::DType::Fp32, TPU_PROGRAM_MAX_BYTES);
    return run.plan;
}

const Shape standard_shapes[] = {{1, 1, 1}, {127, 129, 131}, {300, 200, 500}};

} // namespace

TEST_CASE("int8 matmuls on a 128x128 card are exact", "[compiler][int8]") {
    for (const Shape &s : standard_shapes)
        check_int8(default_card, s, s.m * 7 + s.n);
}

TEST_CASE("bf16 matmuls on a 128x128 card are exact", "[compiler][bf16]") {
    for (const Shape &s : standard_shapes)
        check_bf16(default_card, s, s.m * 7 + s.n);
}

TEST_CASE("fp32 matmuls on a 128x128 card are exact", "[compiler][fp32]") {
    for (const Shape &s : standard_shapes)
        check_fp32(default_card, s, s.m * 5 + s.k);
}

TEST_CASE("fp32 matmuls on a 4x4 array with tiny memories and padded rows are exact",
          "[compiler][fp32][small]") {
    // 48 bytes of UB hold a 2x4 fp32 tile and one row of A: K is tiled in pairs.
    const tpu_engine_config cfg = engine_config(4, 4, 48, 128);
    const Shape shapes[] = {{1, 1, 1}, {13, 7, 11}, {31, 33, 29}};
    for (const Shape &s : shapes)
        check_fp32(cfg, s, s.m + s.k);
    check_fp32(default_card, {37, 141, 130}, 93, {.a = 4, .b = 8, .c = 12});
}

TEST_CASE("bf16 with the test library's special values is exact", "[compiler][bf16]") {
    const Shape s{127, 129, 131};
    std::mt19937_64 rng(5);
    const auto a = tpu::test::random_bf16(rng, std::uint64_t{s.m} * s.k);
    const auto b = tpu::test::random_bf16(rng, std::uint64_t{s.k} * s.n);
    std::vector<tpurt::Bf16> a16(a.size()), b16(b.size());
    std::memcpy(a16.data(), a.data(), a.size() * 2);
    std::memcpy(b16.data(), b.data(), b.size() * 2);
    check_bf16(default_card, s, a16, b16);
}

TEST_CASE("a 4x4 array with tiny memories runs awkward shapes exactly", "[compiler][small]") {
    // ACC of 128 bytes holds 8 rows of a 4-wide tile; UB of 48 bytes holds the weight tile and
    // 8 rows of A (int8), so blocks split into several A tiles. bf16 K tiles are whole blocks of
    // 32 k: on a 32 x 4 array with 320 bytes of UB, a 32 x 4 tile and one row of A.
    const tpu_engine_config cfg = engine_config(4, 4, 48, 128);
    const tpu_engine_config bf16_cfg = engine_config(32, 4, 320, 128);
    const Shape shapes[] = {{1, 1, 1},  {13, 7, 11},  {5, 9, 3},
                            {1, 17, 2}, {31, 33, 29}, {3, 97, 5}};
    for (const Shape &s : shapes) {
        check_int8(cfg, s, s.m + s.k);
        check_bf16(bf16_cfg, s, s.m + s.n);
    }
    check_bf16(cfg, {13, 4, 11}, 5); // K within the 4 rows
}

TEST_CASE("bf16 K tiles below a block of 32 are refused with the reason", "[compiler][small]") {
    const auto message = [](const tpurt::ArrayLimits &limits) {
        try {
            tpurt::choose_matmul_tiling(tpurt::DType::Bf16, 9, 40, 10, limits);
        } catch (const tpurt::Error &error) {
            CHECK(error.code() == tpurt::ErrorCode::Unsupported);
            return std::string(error.what());
        }
        return std::string("accepted");
    };
    CHECK(message({16, 16, 1u << 20, 1u << 20}) ==
          "matmul does not fit the card: matrix unit of 16 rows for bf16 K tiles of 32");
    CHECK(message({64, 4, 100, 1u << 20}) ==
          "matmul does not fit the card: unified buffer of 100 bytes for bf16 K tiles of 32");
}

TEST_CASE("A streams through the weights when the unified buffer is the limit",
          "[compiler][small]") {
    // 2 bf16 rows of A fit next to a 32x4 weight tile, but the accumulators hold 256 rows: one
    // block of 64 rows, its A in 32 pieces per k tile, weights loaded once per k tile.
    const tpu_engine_config cfg = engine_config(32, 4, 384, 4096);
    const tpurt::MatmulPlan plan = check_bf16(cfg, {64, 64, 4}, 3);
    CHECK(plan.tiling.tile_m == 2);
    CHECK(plan.tiling.block_m == 64);
    CHECK(plan.weight_loads == 2);
}

TEST_CASE("A stays in the unified buffer for a group of column tiles", "[compiler]") {
    // 512^3 on 128x128: one block of all 512 rows and all 4 column tiles; A is loaded once per
    // k tile and reused by the 4 weight tiles.
    const tpurt::MatmulPlan plan = check_int8(default_card, {512, 512, 512}, 4);
    CHECK(plan.tiling.block_m == 512);
    CHECK(plan.tiling.tile_m == 512);
    CHECK(plan.tiling.group_n == 4);
    CHECK(plan.weight_loads == 16);
    std::size_t a_loads = 0;
    for (const tpu_insn &insn : plan.programs.front().insns)
        a_loads += insn.hdr.opcode == TPU_OP_DMA_IN && insn.dma.local_addr != 0;
    CHECK(a_loads == 4);
}

TEST_CASE("a unified buffer smaller than a weight tile shrinks the tiles", "[compiler][small]") {
    // 4160 bytes: a bf16 32x128 tile (8 KiB) does not fit; 32x64 plus one row of A does.
    const tpu_engine_config cfg = engine_config(32, 128, 4160, 1u << 16);
    const tpurt::MatmulPlan plan = check_bf16(cfg, {9, 40, 128}, 77);
    CHECK(plan.tiling.tile_k == 32);
    CHECK(plan.tiling.tile_n == 64);
    CHECK(plan.tiling.tile_m == 1);
    // 20 bytes: an int8 4x4 tile and one row of A; fp32 shrinks to 1x2 and one row.
    const tpu_engine_config tiny = engine_config(4, 4, 20, 64);
    check_int8(tiny, {9, 11, 10}, 78);
    CHECK(check_fp32(tiny, {9, 11, 10}, 79).tiling.tile_k == 1);
}

TEST_CASE("padded row strides are honoured", "[compiler][strides]") {
    const runtime_test::RowPadding padding{.a = 3, .b = 8, .c = 20};
    check_int8(default_card, {37, 141, 130}, 90, padding);
    check_bf16(default_card, {37, 141, 130}, 91, {.a = 6, .b = 2, .c = 4});
    check_int8(engine_config(4, 4, 48, 128), {13, 7, 11}, 92, padding);
}

TEST_CASE("programs over 1 MiB are split into several jobs", "[compiler][split]") {
    // 4x4 array, big memories: 128 K tiles x 128 N tiles x 3 instructions > 32768.
    const tpu_engine_config cfg = engine_config(4, 4, 16u << 20, 8u << 20);
    const tpurt::MatmulPlan plan = check_int8(cfg, {256, 512, 512}, 100);
    CHECK(plan.programs.size() >= 2);
    CHECK(plan.instructions > tpurt::max_program_insns);
    CHECK(plan.programs.front().size_bytes() > TPU_PROGRAM_MAX_BYTES / 2);
}

TEST_CASE("a smaller program limit gives more, shorter jobs", "[compiler][split]") {
    const tpu_engine_config cfg = engine_config(4, 4, 48, 128);
    const tpurt::MatmulPlan plan = check_int8(cfg, {80, 12, 20}, 101, {}, 4096);
    CHECK(plan.programs.size() > 3);
}

TEST_CASE("a K reduction that cannot fit one program is refused", "[compiler][errors]") {
    const tpurt::ArrayLimits one_by_one{1, 1, 1u << 20, 1u << 20};
    try {
        tpurt::choose_matmul_tiling(tpurt::DType::Int8, 1, 40000, 1, one_by_one);
        FAIL("a 40000-deep reduction on a 1x1 array was accepted");
    } catch (const tpurt::Error &error) {
        CHECK(error.code() == tpurt::ErrorCode::Unsupported);
        CHECK(std::string(error.what()).find("K=40000") != std::string::npos);
    }
}

TEST_CASE("the compiler rejects bad problems", "[compiler][errors]") {
    const tpurt::ArrayLimits limits = runtime_test::limits_of(default_card);
    tpurt::MatmulProblem problem;
    problem.m = problem.k = problem.n = 8;
    SECTION("empty shape") {
        problem.k = 0;
        CHECK_THROWS_AS(tpurt::compile_matmul(problem, limits), tpurt::Error);
    }
    SECTION("int32 as input") {
        problem.type = tpurt::DType::Int32;
        CHECK_THROWS_AS(tpurt::compile_matmul(problem, limits), tpurt::Error);
    }
    SECTION("stride shorter than a row") {
        problem.a_stride = 7;
        CHECK_THROWS_AS(tpurt::compile_matmul(problem, limits), tpurt::Error);
    }
    SECTION("array too small for anything") {
        CHECK_THROWS_AS(tpurt::compile_matmul(problem, tpurt::ArrayLimits{4, 4, 1, 64}),
                        tpurt::Error);
    }
}
