// SPDX-License-Identifier: MIT
// Validation of the spec 1.1 instructions as seen from a job: every malformed field of ACTIVATE,
// VECTOR, REDUCE, POOL, TRANSPOSE, SYNC, TIMESTAMP, LOAD_W (host, transposed, FP32) and MATMUL
// (row groups) gives its error code at the failing instruction's index, with the offending
// offset for range errors; and host faults of the new host accesses.
#include <catch2/catch.hpp>

#include <functional>

#include "tpu_test/card.hpp"

using namespace tpu::test;

namespace {

constexpr uint32_t kUb = 64 * 1024;
constexpr uint32_t kAcc = 16 * 1024;
constexpr uint64_t kHost = 0x100000;
constexpr uint64_t kReadOnly = 0x200000;

struct Fixture {
    HostMemory mem{64ull << 20};
    Card card{mem, config()};
    AddressSpace space = card.address_space(0);

    static tpu_engine_config config() {
        tpu_engine_config cfg = Card::default_config();
        cfg.mxu_rows = 16;
        cfg.mxu_cols = 8;
        cfg.ub_bytes = kUb;
        cfg.acc_bytes = kAcc;
        cfg.threads = 1;
        return cfg;
    }

    Fixture() {
        space.map(kHost, 256 * 1024, kReadWrite);
        space.map(kReadOnly, 4096, kRead);
    }

    // Runs before (padded with NOPs to three instructions), insn at index 3, then HALT.
    tpu_job_result run(const tpu_insn &insn, Program before = {}) {
        while (before.size() < 3)
            before.push_back(nop());
        before.push_back(insn);
        before.push_back(halt());
        return card.run(space, before);
    }
};

struct Case {
    const char *what;
    std::function<void(tpu_insn &)> change;
    uint32_t status;
    uint64_t fault_addr = 0;
};

// good must succeed; each case applied to good must fail at index 3 as stated.
void check_cases(const tpu_insn &good, std::initializer_list<Case> cases, Program before = {}) {
    Fixture f;
    REQUIRE(f.run(good, before).status == TPU_ERR_NONE);
    for (const Case &c : cases) {
        tpu_insn i = good;
        c.change(i);
        tpu_job_result r = f.run(i, before);
        CAPTURE(c.what);
        CHECK(r.status == c.status);
        CHECK(r.error_pc == 3);
        CHECK(r.fault_addr == c.fault_addr);
    }
}

constexpr uint32_t kBad = TPU_ERR_BAD_OPERAND;

} // namespace

TEST_CASE("ACTIVATE operands are validated", "[decoder]") {
    tpu_insn good = activate(TPU_DT_BF16, TPU_ACT_GELU | TPU_F_ACT_BIAS | TPU_F_ACT_SRC_INT32, 4, 8,
                             0, 32, 0x100, 16, 0x200, 0.5f);
    check_cases(
        good, {{"dtype", [](tpu_insn &i) { i.act.dtype = 4; }, kBad},
               {"function 12", [](tpu_insn &i) { i.act.flags = (i.act.flags & ~0xf) | 12; }, kBad},
               {"unknown flag", [](tpu_insn &i) { i.act.flags |= 1u << 6; }, kBad},
               {"zero rows", [](tpu_insn &i) { i.act.rows = 0; }, kBad},
               {"zero cols", [](tpu_insn &i) { i.act.cols = 0; }, kBad},
               {"misaligned acc", [](tpu_insn &i) { i.act.acc_addr = 2; }, kBad},
               {"misaligned acc stride", [](tpu_insn &i) { i.act.acc_stride = 30; }, kBad},
               {"misaligned dst", [](tpu_insn &i) { i.act.dst_addr = 0x101; }, kBad},
               {"misaligned dst stride", [](tpu_insn &i) { i.act.dst_stride = 17; }, kBad},
               {"misaligned bias", [](tpu_insn &i) { i.act.bias_addr = 0x202; }, kBad},
               {"bias address without BIAS",
                [](tpu_insn &i) { i.act.flags &= uint16_t(~TPU_F_ACT_BIAS); }, kBad},
               {"dst beyond the UB", [](tpu_insn &i) { i.act.dst_addr = kUb - 16; },
                TPU_ERR_UB_RANGE, kUb},
               {"bias beyond the UB", [](tpu_insn &i) { i.act.bias_addr = kUb - 16; },
                TPU_ERR_UB_RANGE, kUb},
               {"acc beyond the accumulators", [](tpu_insn &i) { i.act.acc_stride = kAcc / 2; },
                TPU_ERR_ACC_RANGE, kAcc},
               {"UB range before ACC range",
                [](tpu_insn &i) {
                    i.act.acc_addr = kAcc;
                    i.act.dst_addr = kUb;
                },
                TPU_ERR_UB_RANGE, kUb}});
}

TEST_CASE("VECTOR, REDUCE and TRANSPOSE operands are validated", "[decoder]") {
    check_cases(
        vector(TPU_DT_INT32, TPU_VOP_MIN, 4, 8, 0, 32, 0x100, 0, 0x200, 32),
        {{"dtype", [](tpu_insn &i) { i.vec.dtype = 9; }, kBad},
         {"op 9", [](tpu_insn &i) { i.vec.flags = 9; }, kBad},
         {"flag bits above B_COL", [](tpu_insn &i) { i.vec.flags |= 0x20; }, kBad},
         {"zero rows", [](tpu_insn &i) { i.vec.rows = 0; }, kBad},
         {"misaligned a", [](tpu_insn &i) { i.vec.a_addr = 2; }, kBad},
         {"misaligned b stride", [](tpu_insn &i) { i.vec.b_stride = 6; }, kBad},
         {"misaligned dst", [](tpu_insn &i) { i.vec.dst_addr = 0x201; }, kBad},
         {"a beyond the UB", [](tpu_insn &i) { i.vec.a_addr = kUb - 32; }, TPU_ERR_UB_RANGE, kUb},
         {"b beyond the UB", [](tpu_insn &i) { i.vec.b_addr = kUb; }, TPU_ERR_UB_RANGE, kUb},
         {"a row starting beyond the UB: its start",
          [](tpu_insn &i) { i.vec.dst_stride = kUb / 2; }, TPU_ERR_UB_RANGE, kUb + 0x200}});
    check_cases(
        reduce(TPU_DT_BF16, TPU_ROP_SUM, 4, 8, 0, 16, 0x100, 4),
        {{"op 2", [](tpu_insn &i) { i.vec.flags = 2; }, kBad},
         {"b_addr is reserved", [](tpu_insn &i) { i.vec.b_addr = 4; }, kBad},
         {"b_stride is reserved", [](tpu_insn &i) { i.vec.b_stride = 4; }, kBad},
         {"SUM output must be 4-aligned", [](tpu_insn &i) { i.vec.dst_addr = 0x102; }, kBad},
         {"zero cols", [](tpu_insn &i) { i.vec.cols = 0; }, kBad},
         {"dst beyond the UB", [](tpu_insn &i) { i.vec.dst_addr = kUb - 8; }, TPU_ERR_UB_RANGE,
          kUb}});
    check_cases(transpose(TPU_DT_INT8, 3, 5, 0, 5, 0x100, 3),
                {{"flags", [](tpu_insn &i) { i.vec.flags = 1; }, kBad},
                 {"b_addr is reserved", [](tpu_insn &i) { i.vec.b_addr = 1; }, kBad},
                 {"dst (cols rows) beyond the UB", [](tpu_insn &i) { i.vec.dst_stride = kUb / 4; },
                  TPU_ERR_UB_RANGE, kUb + 0x100}});
}

TEST_CASE("POOL operands are validated", "[decoder]") {
    PoolShape s;
    s.out_h = 2;
    s.out_w = 3;
    s.channels = 2;
    s.win_h = s.win_w = 3;
    s.stride_h = s.stride_w = 2;
    // Input 5 x 7 pixels of 2 fp32 channels: rows of 56 bytes.
    check_cases(
        pool(TPU_DT_FP32, TPU_POOL_AVG, s, 0, 56, 0x1000, 24),
        {{"op 2", [](tpu_insn &i) { i.pool.flags = 2; }, kBad},
         {"reserved", [](tpu_insn &i) { i.pool.reserved = 1; }, kBad},
         {"zero channels", [](tpu_insn &i) { i.pool.channels = 0; }, kBad},
         {"zero window", [](tpu_insn &i) { i.pool.win_w = 0; }, kBad},
         {"window above the maximum", [](tpu_insn &i) { i.pool.win_h = TPU_POOL_MAX_WINDOW + 1; },
          kBad},
         {"zero stride", [](tpu_insn &i) { i.pool.stride_h = 0; }, kBad},
         {"misaligned source stride", [](tpu_insn &i) { i.pool.src_row_stride = 58; }, kBad},
         {"source rows beyond the UB", [](tpu_insn &i) { i.pool.src_row_stride = kUb / 4; },
          TPU_ERR_UB_RANGE, kUb},
         {"destination beyond the UB", [](tpu_insn &i) { i.pool.dst_addr = kUb - 40; },
          TPU_ERR_UB_RANGE, kUb}});
}

TEST_CASE("SYNC and TIMESTAMP fields are validated", "[decoder]") {
    check_cases(sync_insn(), {{"dtype", [](tpu_insn &i) { i.hdr.dtype = 1; }, kBad},
                              {"operand bytes", [](tpu_insn &i) { i.raw[2] = 1; }, kBad}});
    check_cases(timestamp(5, kHost + 8),
                {{"misaligned address", [](tpu_insn &i) { i.ts.host_addr += 4; }, kBad},
                 {"dtype", [](tpu_insn &i) { i.ts.dtype = 1; }, kBad},
                 {"flags", [](tpu_insn &i) { i.ts.flags = 1; }, kBad},
                 {"reserved", [](tpu_insn &i) { i.ts.reserved[1] = 1; }, kBad},
                 {"read-only page", [](tpu_insn &i) { i.ts.host_addr = kReadOnly; },
                  TPU_ERR_MMU_FAULT, kReadOnly},
                 {"unmapped page", [](tpu_insn &i) { i.ts.host_addr = 0x40000000; },
                  TPU_ERR_MMU_FAULT, 0x40000000},
                 {"beyond the VA space", [](tpu_insn &i) { i.ts.host_addr = 1ull << 40; },
                  TPU_ERR_MMU_FAULT, 1ull << 40}});
}

TEST_CASE("LOAD_W from host memory and transposed is validated", "[decoder]") {
    check_cases(load_w_host(TPU_DT_FP32, 16, 8, kHost, 64, TPU_F_W_TRANSPOSE),
                {{"unknown flag", [](tpu_insn &i) { i.dma.flags |= 4; }, kBad},
                 {"local_addr is reserved", [](tpu_insn &i) { i.dma.local_addr = 4; }, kBad},
                 {"local_stride is reserved", [](tpu_insn &i) { i.dma.local_stride = 4; }, kBad},
                 {"reserved", [](tpu_insn &i) { i.dma.reserved = 1; }, kBad},
                 {"K beyond the array", [](tpu_insn &i) { i.dma.rows = 17; }, kBad},
                 {"dtype INT32", [](tpu_insn &i) { i.dma.dtype = TPU_DT_INT32; }, kBad},
                 {"needs READ", [](tpu_insn &i) { i.dma.host_addr = kReadOnly - 64; },
                  TPU_ERR_MMU_FAULT, kReadOnly - 64},
                 {"row beyond the mapping",
                  [](tpu_insn &i) { i.dma.host_addr = kHost + 256 * 1024 - 64 * 7 - 16; },
                  TPU_ERR_MMU_FAULT, kHost + 256 * 1024},
                 {"beyond the VA space", [](tpu_insn &i) { i.dma.host_addr = 1ull << 39; },
                  TPU_ERR_MMU_FAULT, 1ull << 39}});
    // Transposed from the UB: N rows of K elements must fit.
    check_cases(load_w(TPU_DT_BF16, 16, 8, 0, 32, TPU_F_W_TRANSPOSE),
                {{"N rows of K beyond the UB", [](tpu_insn &i) { i.mxu.src_addr = kUb - 7 * 32; },
                  TPU_ERR_UB_RANGE, kUb}});
}

TEST_CASE("MATMUL row groups are validated", "[decoder]") {
    const Program weights{load_w(TPU_DT_FP32, 4, 8, 0, 16)};
    // 6 rows in groups of 4: rows 0..3 at 0x100 + 16 m, rows 4..5 at 0x100 + 0x400 + 16 (m - 4).
    check_cases(
        matmul_grouped(TPU_DT_FP32, 6, 4, 0x100, 16, 4, 0x400, 0, 32),
        {{"misaligned group stride", [](tpu_insn &i) { i.mxu.group_stride = 0x402; }, kBad},
         {"group stride without groups", [](tpu_insn &i) { i.mxu.row_group = 0; }, kBad},
         {"reserved", [](tpu_insn &i) { i.mxu.reserved = 1; }, kBad},
         {"the second group beyond the UB",
          [](tpu_insn &i) { i.mxu.group_stride = kUb - 0x100 - 16; }, TPU_ERR_UB_RANGE, kUb},
         {"lowest offending offset over all groups",
          [](tpu_insn &i) {
              i.mxu.src_addr = kUb - 64;
              i.mxu.group_stride = 0;
              i.mxu.src_stride = 32;
          },
          TPU_ERR_UB_RANGE, kUb}},
        weights);
}
