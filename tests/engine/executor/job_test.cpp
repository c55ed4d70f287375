// SPDX-License-Identifier: MIT
// Whole jobs: engine creation checks, per-job counters against the cycle model, clean on-chip
// state at the start of every job (isolation between processes), and counters of failed jobs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>

#include "tpu_test/card.hpp"
#include "tpu_test/reference.hpp"

using namespace tpu::test;

namespace {

constexpr uint64_t kHost = 0x100000;

tpu_engine_config small_config() {
    tpu_engine_config cfg = Card::default_config();
    cfg.mxu_rows = 8;
    cfg.mxu_cols = 8;
    cfg.ub_bytes = 4096;
    cfg.acc_bytes = 4096;
    return cfg;
}

} // namespace

TEST_CASE("engine creation rejects bad configurations with a reason", "[job]") {
    HostMemory mem(64ull << 20);
    auto reject = [&](tpu_engine_config cfg) {
        char err[128] = "";
        tpu_engine *e = tpu_engine_create(&cfg, HostMemory::phys_rw, &mem, err, sizeof(err));
        CHECK(e == nullptr);
        CHECK(std::string(err).find("tpu engine:") == 0);
        tpu_engine_destroy(e);
    };
    tpu_engine_config cfg = small_config();
    SECTION("rows 0") {
        cfg.mxu_rows = 0;
    }
    SECTION("cols above 4096") {
        cfg.mxu_cols = 4097;
    }
    SECTION("no unified buffer") {
        cfg.ub_bytes = 0;
    }
    SECTION("accumulators not a multiple of 4") {
        cfg.acc_bytes = 4094;
    }
    SECTION("no clock") {
        cfg.clock_mhz = 0;
    }
    SECTION("absurd thread count") {
        cfg.threads = 100000;
    }
    SECTION("unknown mode") {
        cfg.mode = 2;
    }
    reject(cfg);
}

TEST_CASE("engine creation needs a configuration and a memory callback", "[job]") {
    tpu_engine_config cfg = small_config();
    CHECK(tpu_engine_create(nullptr, HostMemory::phys_rw, nullptr, nullptr, 0) == nullptr);
    CHECK(tpu_engine_create(&cfg, nullptr, nullptr, nullptr, 0) == nullptr);
}

TEST_CASE("a job reports counters from the cycle model", "[job]") {
    HostMemory mem(64ull << 20);
    Card card(mem, small_config());
    AddressSpace space = card.address_space(0);
    space.map(kHost, 4096, kReadWrite);
    const int8_t a[5][3] = {{1, -2, 3}, {4, 5, -6}, {-7, 8, 9}, {127, -128, 0}, {-1, -1, -1}};
    const int8_t w[3][4] = {{1, 2, 3, 4}, {-5, 6, -7, 8}, {9, -10, 11, -128}};
    space.write(kHost, a, sizeof(a));
    space.write(kHost + 64, w, sizeof(w));
    // DMA at 940 MHz and 44800 MB/s: ceil(bytes * 940 / 44800) cycles.
    // issue  start  finish
    Program p{dma_in(TPU_DT_INT8, 5, 3, kHost, 3, 0, 3),               //  0   0   1 (15 bytes)
              dma_in(TPU_DT_INT8, 3, 4, kHost + 64, 4, 64, 4),         //  1   1   2 (12 bytes)
              load_w(TPU_DT_INT8, 3, 4, 64, 4),                        //  2   2   5 (K = 3)
              matmul(TPU_DT_INT8, 5, 3, 0, 3, 0, 16),                  //  3   5  16 (5+3+4-1)
              dma_out_acc(TPU_DT_INT32, 5, 4, kHost + 128, 16, 0, 16), //  6  16  18 (80 bytes)
              halt()};                                                 // 17  17  18
    tpu_job_result r = card.run(space, p);
    REQUIRE(r.status == TPU_ERR_NONE);
    CHECK(r.error_pc == 0);
    CHECK(r.fault_addr == 0);
    CHECK(r.cycles == 18);
    CHECK(r.stall_cycles == 2 + 10);
    CHECK(r.mxu_busy_cycles == 11);
    CHECK(r.macs == 60);
    CHECK(r.macs_int8 == 60);
    CHECK(r.macs_bf16 == 0);
    CHECK(r.macs_fp32 == 0);
    CHECK(r.dma_read_bytes == 27);
    CHECK(r.dma_write_bytes == 80);
    CHECK(r.mmu_faults == 0);
    std::vector<int32_t> want = reference_matmul_int8(&a[0][0], &w[0][0], 5, 3, 4);
    CHECK(space.read_vector<int32_t>(kHost + 128, 20) == want);
}

TEST_CASE("a failed job counts only the instructions before the failure", "[job]") {
    HostMemory mem(64ull << 20);
    Card card(mem, small_config());
    AddressSpace space = card.address_space(0);
    space.map(kHost, 4096, kRead);
    Program p{dma_in(TPU_DT_INT8, 1, 128, kHost, 0, 0, 0), // ceil(128 * 940 / 44800) = 3 cycles
              dma_out(TPU_DT_INT8, 1, 128, kHost, 0, 0, 0), halt()};
    tpu_job_result r = card.run(space, p);
    CHECK(r.status == TPU_ERR_MMU_FAULT);
    CHECK(r.error_pc == 1);
    CHECK(r.fault_addr == kHost);
    CHECK(r.cycles == 3);
    CHECK(r.dma_read_bytes == 128);
    CHECK(r.dma_write_bytes == 0);
    CHECK(r.mmu_faults == 1);
}

TEST_CASE("every job starts with zeroed buffers and no weights", "[job]") {
    HostMemory mem(64ull << 20);
    Card card(mem, small_config());
    AddressSpace first = card.address_space(1);
    AddressSpace second = card.address_space(2);
    first.map(kHost, 4096, kReadWrite);
    second.map(kHost, 4096, kReadWrite);
    std::vector<uint8_t> ones(4096, 1);
    first.write(kHost, ones.data(), ones.size());

    // Job 1 fills the whole UB, loads weights and leaves results in the accumulators.
    Program fill{dma_in(TPU_DT_INT8, 1, 4096, kHost, 0, 0, 0), load_w(TPU_DT_INT8, 8, 8, 0, 8),
                 matmul(TPU_DT_INT8, 64, 8, 0, 8, 0, 32), halt()};
    REQUIRE(card.run(first, fill).status == TPU_ERR_NONE);

    // Job 2 (another context) sees none of it.
    Program peek{dma_out(TPU_DT_INT8, 1, 2048, kHost, 0, 0, 0),
                 dma_out_acc(TPU_DT_INT32, 1, 512, kHost + 2048, 0, 0, 0), halt()};
    REQUIRE(card.run(second, peek).status == TPU_ERR_NONE);
    CHECK(second.read_vector<uint8_t>(kHost, 4096) == std::vector<uint8_t>(4096, 0));

    tpu_job_result r = card.run(second, Program{matmul(TPU_DT_INT8, 1, 8, 0, 8, 0, 32)});
    CHECK(r.status == TPU_ERR_NO_WEIGHTS);
}

TEST_CASE("a job's DMA_INs leave the rest of the zeroed buffer zero", "[job]") {
    // The engine zeroes what the previous job wrote only where a job does not overwrite it
    // first (LocalMemory): every part of that bookkeeping must still read as zero.
    HostMemory mem(64ull << 20);
    Card card(mem, small_config());
    AddressSpace space = card.address_space(1);
    space.map(kHost, 3 * 4096, kReadWrite);
    const std::vector<uint8_t> ones(4096, 1), twos(4096, 2);
    space.write(kHost, ones.data(), ones.size());
    space.write(kHost + 4096, twos.data(), twos.size());
    const Program fill{dma_in(TPU_DT_INT8, 1, 4096, kHost, 0, 0, 0), halt()};
    const Program dump{dma_out(TPU_DT_INT8, 1, 4096, kHost + 2 * 4096, 0, 0, 0), halt()};
    auto after = [&](const Program &writes) {
        REQUIRE(card.run(space, fill).status == TPU_ERR_NONE);
        REQUIRE(card.run(space, writes).status == TPU_ERR_NONE);
        return space.read_vector<uint8_t>(kHost + 2 * 4096, 4096);
    };
    auto expect = [](std::initializer_list<std::pair<uint32_t, uint32_t>> twos_at) {
        std::vector<uint8_t> v(4096, 0);
        for (auto [begin, end] : twos_at)
            std::fill(v.begin() + begin, v.begin() + end, 2);
        return v;
    };
    const tpu_insn out = dump[0];

    SECTION("a prefix, then a suffix") {
        CHECK(after({dma_in(TPU_DT_INT8, 1, 1024, kHost + 4096, 0, 0, 0),
                     dma_in(TPU_DT_INT8, 1, 512, kHost + 4096, 0, 3584, 0), out, halt()}) ==
              expect({{0, 1024}, {3584, 4096}}));
    }
    SECTION("the middle") {
        CHECK(after({dma_in(TPU_DT_INT8, 1, 1024, kHost + 4096, 0, 1024, 0), out, halt()}) ==
              expect({{1024, 2048}}));
    }
    SECTION("rows with gaps between them") {
        CHECK(after({dma_in(TPU_DT_INT8, 2, 64, kHost + 4096, 64, 0, 128), out, halt()}) ==
              expect({{0, 64}, {128, 192}}));
    }
    SECTION("a DMA_IN that faults, then another job") {
        // Back-to-back rows one page apart in host memory: the third is not mapped, so the
        // first two are moved and the DMA faults.
        REQUIRE(card.run(space, fill).status == TPU_ERR_NONE);
        tpu_job_result r = card.run(
            space, Program{dma_in(TPU_DT_INT8, 4, 512, kHost + 4096, 4096, 0, 512), halt()});
        REQUIRE(r.status == TPU_ERR_MMU_FAULT);
        REQUIRE(card.run(space, dump).status == TPU_ERR_NONE);
        CHECK(space.read_vector<uint8_t>(kHost + 2 * 4096, 4096) == expect({}));
    }
}

TEST_CASE("reset clears on-chip state between jobs too", "[job]") {
    HostMemory mem(64ull << 20);
    Card card(mem, small_config());
    AddressSpace space = card.address_space(0);
    space.map(kHost, 4096, kReadWrite);
    std::vector<uint8_t> ones(64, 0xff);
    space.write(kHost, ones.data(), ones.size());
    REQUIRE(card.run(space, Program{dma_in(TPU_DT_INT8, 1, 64, kHost, 0, 0, 0)}).status ==
            TPU_ERR_NONE);
    tpu_engine_reset(card.engine());
    REQUIRE(card.run(space, Program{dma_out(TPU_DT_INT8, 1, 64, kHost, 0, 0, 0)}).status ==
            TPU_ERR_NONE);
    CHECK(space.read_vector<uint8_t>(kHost, 64) == std::vector<uint8_t>(64, 0));
}
