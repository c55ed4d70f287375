// SPDX-License-Identifier: MIT
// End-to-end matmul exactness: hand-tiled programs run on the engine through the MMU, compared
// bit for bit with the independent reference loops, for int8 and bf16, several array shapes,
// thread counts and matrix shapes up to 1024^3; plus int32 wrap-around over long K chains.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <tuple>

#include "compare.hpp"
#include "executor/cycle_model.hpp"
#include "tiled_matmul.hpp"
#include "tpu_test/card.hpp"
#include "tpu_test/random_data.hpp"
#include "tpu_test/reference.hpp"

using namespace tpu::test;
namespace cycles = tpu::engine::cycles;

namespace {

tpu_engine_config config(uint32_t rows, uint32_t cols, uint32_t threads) {
    tpu_engine_config cfg = Card::default_config();
    cfg.mxu_rows = rows;
    cfg.mxu_cols = cols;
    cfg.threads = threads;
    return cfg;
}

// MXU-busy cycles the tiled program must report (the MATMULs of the documented cycle model),
// and the cycles it would take if no two instructions overlapped, an upper bound of the total.
struct ExpectedCycles {
    uint64_t busy = 0;
    uint64_t serial = 0;
};

ExpectedCycles expected_cycles(const TiledMatmul &mm, const tpu_engine_config &cfg, uint32_t es) {
    auto dma = [&](uint64_t bytes) {
        return cycles::dma(bytes, cfg.clock_mhz, cycles::kDefaultDmaMbps);
    };
    ExpectedCycles e;
    e.serial = dma(uint64_t(mm.m) * mm.k * es) + dma(uint64_t(mm.k) * mm.n * es) +
               dma(uint64_t(mm.m) * mm.n * 4) + cycles::kIssue;
    for (uint32_t n0 = 0; n0 < mm.n; n0 += cfg.mxu_cols)
        for (uint32_t k0 = 0; k0 < mm.k; k0 += cfg.mxu_rows) {
            uint32_t kk = std::min(cfg.mxu_rows, mm.k - k0);
            uint32_t nn = std::min(cfg.mxu_cols, mm.n - n0);
            e.busy += cycles::matmul(mm.m, kk, nn);
            e.serial += cycles::load_w(kk) + cycles::matmul(mm.m, kk, nn);
        }
    return e;
}

void check_counters(const MatmulRun &run, const TiledMatmul &mm, const tpu_engine_config &cfg,
                    uint32_t es) {
    REQUIRE(run.result.status == TPU_ERR_NONE);
    CHECK(run.result.macs == uint64_t(mm.m) * mm.k * mm.n);
    CHECK((es == 1 ? run.result.macs_int8 : run.result.macs_bf16) == run.result.macs);
    CHECK(run.result.dma_read_bytes == (uint64_t(mm.m) * mm.k + uint64_t(mm.k) * mm.n) * es);
    CHECK(run.result.dma_write_bytes == uint64_t(mm.m) * mm.n * 4);
    ExpectedCycles want = expected_cycles(mm, cfg, es);
    CHECK(run.result.mxu_busy_cycles == want.busy);
    CHECK(run.result.cycles > want.busy);
    CHECK(run.result.cycles <= want.serial);
    CHECK(run.result.mmu_faults == 0);
}

void check_int8(const tpu_engine_config &cfg, uint32_t m, uint32_t k, uint32_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<int8_t> a = random_int8(rng, uint64_t(m) * k);
    std::vector<int8_t> b = random_int8(rng, uint64_t(k) * n);
    std::vector<int32_t> want = reference_matmul_int8(a.data(), b.data(), m, k, n);

    HostMemory mem;
    Card card(mem, cfg);
    AddressSpace space = card.address_space(3);
    TiledMatmul mm{TPU_DT_INT8, m, k, n};
    MatmulRun run = run_tiled_matmul(card, space, mm, a.data(), b.data());
    check_counters(run, mm, cfg, 1);
    CHECK(first_difference(run.c.data(), want.data(), want.size()) == "");
}

// The tiled program's bf16 result when its K tiles (of tile_k) are not whole blocks of 32:
// each MATMUL starts its own blocks, continuing from the accumulator (ACCUMULATE).
std::vector<float> reference_bf16_tiled(const std::vector<uint16_t> &a,
                                        const std::vector<uint16_t> &b, uint32_t m, uint32_t k,
                                        uint32_t n, uint32_t tile_k) {
    std::vector<float> c(uint64_t(m) * n);
    for (uint32_t i = 0; i < m; i++)
        for (uint32_t j = 0; j < n; j++) {
            float acc = 0.0f;
            for (uint32_t k0 = 0; k0 < k; k0 += tile_k)
                acc = reference_bf16_chain(acc, &a[uint64_t(i) * k + k0], 1,
                                           &b[uint64_t(k0) * n + j], n, std::min(tile_k, k - k0));
            c[uint64_t(i) * n + j] = acc;
        }
    return c;
}

void check_bf16(const tpu_engine_config &cfg, uint32_t m, uint32_t k, uint32_t n, uint64_t seed,
                const Bf16Mix &mix) {
    std::mt19937_64 rng(seed);
    std::vector<uint16_t> a = random_bf16(rng, uint64_t(m) * k, mix);
    std::vector<uint16_t> b = random_bf16(rng, uint64_t(k) * n, mix);
    // K tiles of whole blocks give the untiled result.
    std::vector<float> want = cfg.mxu_rows % kBf16Block == 0
                                  ? reference_matmul_bf16(a.data(), b.data(), m, k, n)
                                  : reference_bf16_tiled(a, b, m, k, n, cfg.mxu_rows);

    HostMemory mem;
    Card card(mem, cfg);
    AddressSpace space = card.address_space(3);
    TiledMatmul mm{TPU_DT_BF16, m, k, n};
    MatmulRun run = run_tiled_matmul(card, space, mm, a.data(), b.data());
    check_counters(run, mm, cfg, 2);
    CHECK(first_difference(run.c.data(), want.data(), want.size()) == "");
}

} // namespace

TEST_CASE("int8 matmul on the engine equals the int32 wrap-around reference", "[matmul]") {
    auto [rows, cols, threads] = GENERATE(
        table<uint32_t, uint32_t, uint32_t>({{128, 128, 0}, {8, 16, 1}, {200, 48, 3}, {2, 3, 2}}));
    auto [m, k, n] = GENERATE(table<uint32_t, uint32_t, uint32_t>({{1, 1, 1}, {127, 129, 131}}));
    CAPTURE(rows, cols, threads, m, k, n);
    check_int8(config(rows, cols, threads), m, k, n, 1000 + m + rows);
}

TEST_CASE("bf16 matmul on the engine equals the fmaf reference", "[matmul]") {
    auto [rows, cols, threads] = GENERATE(table<uint32_t, uint32_t, uint32_t>(
        {{128, 128, 0}, {8, 16, 1}, {200, 48, 3}, {2, 3, 2}, {64, 40, 2}, {96, 24, 1}}));
    auto [m, k, n] = GENERATE(table<uint32_t, uint32_t, uint32_t>({{1, 1, 1}, {127, 129, 131}}));
    CAPTURE(rows, cols, threads, m, k, n);
    check_bf16(config(rows, cols, threads), m, k, n, 2000 + m + rows, Bf16Mix{});
}

TEST_CASE("bf16 matmul with many specials: subnormals, overflow to inf and NaN", "[matmul]") {
    Bf16Mix mix;
    mix.zero = 100;
    mix.subnormal = 300;
    mix.tiny = 200;
    mix.large = 200;
    check_bf16(config(16, 32, 2), 37, 70, 45, 7, mix);
}

TEST_CASE("int8 matmul 1024x1024x1024", "[matmul][large]") {
    check_int8(config(128, 128, 0), 1024, 1024, 1024, 42);
}

TEST_CASE("bf16 matmul 1024x1024x1024", "[matmul][large]") {
    check_bf16(config(128, 128, 0), 1024, 1024, 1024, 43, Bf16Mix{});
}

TEST_CASE("int8 accumulation wraps around modulo 2^32", "[matmul]") {
    // 1100 MATMULs of -128 * -128 over K = 128 add 2^21 each: 1100 * 2^21 > 2^31.
    constexpr uint32_t kK = 128, kReps = 1100;
    std::vector<int8_t> a(2 * kK), w(kK * 2);
    std::mt19937_64 rng(5);
    for (uint32_t i = 0; i < kK; i++) {
        a[i] = -128; // row 0: saturating pattern
        a[kK + i] = int8_t(rng());
        w[2 * i] = -128;
        w[2 * i + 1] = int8_t(rng());
    }
    // Reference over K * kReps: A repeated along k, W stacked kReps times.
    std::vector<int8_t> a_long(2 * kK * kReps), w_long(kK * kReps * 2);
    for (uint32_t r = 0; r < kReps; r++)
        for (uint32_t i = 0; i < kK; i++) {
            a_long[r * kK + i] = a[i];
            a_long[kK * kReps + r * kK + i] = a[kK + i];
            w_long[(r * kK + i) * 2] = w[2 * i];
            w_long[(r * kK + i) * 2 + 1] = w[2 * i + 1];
        }
    std::vector<int32_t> want =
        reference_matmul_int8(a_long.data(), w_long.data(), 2, kK * kReps, 2);
    CHECK(int64_t(want[0]) != int64_t(16384) * kK * kReps); // it did wrap

    HostMemory mem;
    Card card(mem, config(128, 128, 0));
    AddressSpace space = card.address_space(0);
    space.map(0x10000, 4096, kReadWrite);
    space.write(0x10000, a.data(), a.size());
    space.write(0x10000 + 1024, w.data(), w.size());
    Program p{dma_in(TPU_DT_INT8, 1, 2 * kK, 0x10000, 0, 0, 0),
              dma_in(TPU_DT_INT8, 1, 2 * kK, 0x10000 + 1024, 0, 1024, 0),
              load_w(TPU_DT_INT8, kK, 2, 1024, 2)};
    for (uint32_t r = 0; r < kReps; r++)
        p.push_back(matmul(TPU_DT_INT8, 2, kK, 0, kK, 0, 8, r ? TPU_F_ACCUMULATE : 0));
    p.push_back(dma_out_acc(TPU_DT_INT32, 2, 2, 0x10000 + 2048, 8, 0, 8));
    p.push_back(halt());
    tpu_job_result r = card.run(space, p);
    REQUIRE(r.status == TPU_ERR_NONE);
    std::vector<int32_t> got = space.read_vector<int32_t>(0x10000 + 2048, 4);
    CHECK(first_difference(got.data(), want.data(), 4) == "");
}
