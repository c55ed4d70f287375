// SPDX-License-Identifier: MIT
// The vector unit's bounds on one instruction's work (docs/hardware.md section 6): at most as many
// elements as the unified buffer holds, POOL windows at most TPU_POOL_MAX_WINDOW square, checked
// at decode with operands whose rows overlap (stride 0) so every range fits; and abort requests
// stopping a long VPU instruction part-way, with what it wrote cleared for the next job.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <iterator>
#include <vector>

#include "abort_when_running.hpp"
#include "rig.hpp"
#include "vpu/vpu.hpp"

using namespace tpu::test;

namespace {

constexpr uint32_t kUb = Rig::kUb; // 64 KiB

// The instruction at index 1 (after a NOP), then HALT.
tpu_job_result run_one(Rig &rig, const tpu_insn &insn) {
    return rig.run(Program{nop(), insn, halt()});
}

struct LimitCase {
    const char *what;
    tpu_insn under; // the largest allowed work
    tpu_insn over;  // one step more
};

PoolShape pool_shape(uint16_t out_h, uint16_t out_w, uint16_t channels, uint8_t win_h,
                     uint8_t win_w) {
    PoolShape s;
    s.out_h = out_h;
    s.out_w = out_w;
    s.channels = channels;
    s.win_h = win_h;
    s.win_w = win_w;
    s.stride_h = s.stride_w = 1;
    return s;
}

} // namespace

TEST_CASE("one VPU instruction processes at most a unified buffer of elements", "[vpu][decoder]") {
    const uint32_t mode = GENERATE(from_range(std::begin(kModes), std::end(kModes)));
    Rig rig(mode);
    const LimitCase cases[] = {
        {"VECTOR INT8", vector(TPU_DT_INT8, TPU_VOP_ADD, 32768, 2, 0, 0, 0, 0, 0x100, 0),
         vector(TPU_DT_INT8, TPU_VOP_ADD, 32769, 2, 0, 0, 0, 0, 0x100, 0)},
        {"VECTOR FP32", vector(TPU_DT_FP32, TPU_VOP_MUL, kUb / 4, 1, 0, 0, 0x40, 0, 0x80, 0),
         vector(TPU_DT_FP32, TPU_VOP_MUL, kUb / 4 + 1, 1, 0, 0, 0x40, 0, 0x80, 0)},
        {"ACTIVATE BF16 (output dtype)",
         activate(TPU_DT_BF16, TPU_ACT_EXP, kUb / 2, 1, 0, 0, 0, 0, 0, 1.0f),
         activate(TPU_DT_BF16, TPU_ACT_EXP, kUb / 2 + 1, 1, 0, 0, 0, 0, 0, 1.0f)},
        {"REDUCE INT32 (input elements)",
         reduce(TPU_DT_INT32, TPU_ROP_SUM, kUb / 4, 1, 0, 0, 0x100, 0),
         reduce(TPU_DT_INT32, TPU_ROP_SUM, kUb / 4 + 1, 1, 0, 0, 0x100, 0)},
        {"TRANSPOSE INT8", transpose(TPU_DT_INT8, 256, 256, 0, 0, 0x1000, 0),
         transpose(TPU_DT_INT8, 257, 256, 0, 0, 0x1000, 0)},
        {"POOL output elements",
         pool(TPU_DT_FP32, TPU_POOL_MAX, pool_shape(1, 1, kUb / 4, 1, 1), 0, 0, 0, 0),
         pool(TPU_DT_FP32, TPU_POOL_MAX, pool_shape(2, 1, kUb / 4, 1, 1), 0, 0, 0, 0)},
        {"POOL window height",
         pool(TPU_DT_INT8, TPU_POOL_AVG, pool_shape(4, 4, 3, TPU_POOL_MAX_WINDOW, 2), 0, 64, 0, 0),
         pool(TPU_DT_INT8, TPU_POOL_AVG, pool_shape(4, 4, 3, TPU_POOL_MAX_WINDOW + 1, 2), 0, 64, 0,
              0)},
        {"POOL window width",
         pool(TPU_DT_BF16, TPU_POOL_MAX, pool_shape(2, 2, 1, 1, TPU_POOL_MAX_WINDOW), 0, 0, 0, 0),
         pool(TPU_DT_BF16, TPU_POOL_MAX, pool_shape(2, 2, 1, 1, TPU_POOL_MAX_WINDOW + 1), 0, 0, 0,
              0)},
    };
    for (const LimitCase &c : cases) {
        CAPTURE(c.what, mode);
        tpu_job_result r = run_one(rig, c.under);
        CHECK(r.status == TPU_ERR_NONE);
        r = run_one(rig, c.over);
        CHECK(r.status == TPU_ERR_BAD_OPERAND);
        CHECK(r.error_pc == 1);
        CHECK(r.fault_addr == 0);
        CHECK(r.cycles == 1); // the NOP only
    }
}

TEST_CASE("an operand beyond the UB is UB_RANGE, not over the work limit", "[vpu][decoder]") {
    // 2 x 32768 INT8 elements in rows that do not overlap: the work limit allows the shape, and
    // the second row ends past the UB.
    Rig rig(TPU_ENGINE_FAST);
    tpu_job_result r =
        run_one(rig, vector(TPU_DT_INT8, TPU_VOP_ADD, 2, 32768, 0, 32768, 0, 0, 0x10, 32768));
    CHECK(r.status == TPU_ERR_UB_RANGE);
    CHECK(r.error_pc == 1);
    CHECK(r.fault_addr == kUb);
}

TEST_CASE("abort from another thread stops a long VPU instruction", "[vpu][abort]") {
    const uint32_t mode = GENERATE(from_range(std::begin(kModes), std::end(kModes)));
    CAPTURE(mode);
    HostMemory mem(64ull << 20);
    tpu_engine_config cfg = Card::default_config(); // 16 MiB unified buffer
    cfg.threads = 1;
    cfg.mode = mode;
    Card card(mem, cfg);
    AddressSpace space = card.address_space(0);
    constexpr uint64_t kIn = 0x100000, kOut = 0x101000;
    constexpr uint32_t kDst = 1 << 20;
    space.map(kIn, 8192, kReadWrite);
    space.write_vector(kIn, std::vector<uint8_t>(4096, 0x7f));

    // 256 x 256 x 256 INT8 outputs, each the max over a 16 x 16 window: 2^32 reads, a minute or
    // more of work, within the limit because the source rows overlap (stride 0).
    const PoolShape s = pool_shape(256, 256, 256, TPU_POOL_MAX_WINDOW, TPU_POOL_MAX_WINDOW);
    const Program p{dma_in(TPU_DT_INT8, 1, 4096, kIn, 0, 0, 0),
                    pool(TPU_DT_INT8, TPU_POOL_MAX, s, 0, 0, kDst, 0), halt()};
    // Aborted once the DMA_IN is done and the POOL has started.
    AbortWhenRunning aborter(card.engine(), 2);
    tpu_job_result r = card.run(space, p);
    const auto end = std::chrono::steady_clock::now();
    aborter.job_ended();
    REQUIRE(aborter.aborted());
    CHECK(r.status == TPU_ERR_ABORTED);
    CHECK(r.error_pc == 1);
    CHECK(r.fault_addr == 0);
    CHECK(end - aborter.abort_time() < std::chrono::seconds(1));

    // The POOL had written part of its output; the next job must not see it.
    tpu_engine_reset(card.engine());
    r = card.run(space, Program{dma_out(TPU_DT_INT8, 1, 4096, kOut, 0, kDst, 0), halt()});
    REQUIRE(r.status == TPU_ERR_NONE);
    CHECK(space.read_vector<uint8_t>(kOut, 4096) == std::vector<uint8_t>(4096, 0));
}

TEST_CASE("each VPU loop stops before its first row once abort is set", "[vpu][abort]") {
    using namespace tpu::engine;
    std::vector<uint8_t> ub(4096, 0x11);
    std::vector<uint8_t> acc(4096, 0x22);
    const std::vector<uint8_t> before = ub;
    std::atomic<bool> abort{true};
    const Extent2D rows{0, 64, 4, 64};

    ActivateInsn act;
    act.rows = 4;
    act.cols = 16;
    act.acc = act.dst = rows;
    VectorInsn vec;
    vec.rows = 4;
    vec.cols = 64;
    vec.a = vec.b = vec.dst = rows;
    ReduceInsn red;
    red.rows = 4;
    red.cols = 64;
    red.a = rows;
    red.dst = Extent2D{1024, 4, 4, 4};
    PoolInsn pl;
    pl.out_h = pl.out_w = pl.channels = pl.win_h = pl.win_w = pl.stride_h = pl.stride_w = 1;
    pl.src = Extent2D{0, 1, 1, 1};
    pl.dst = Extent2D{1024, 1, 1, 1};
    TransposeInsn tr;
    tr.rows = tr.cols = 4;
    tr.a = Extent2D{0, 4, 4, 4};
    tr.dst = Extent2D{1024, 4, 4, 4};

    CHECK_FALSE(vpu::activate(act, acc.data(), ub.data(), abort));
    CHECK_FALSE(vpu::vector(vec, ub.data(), abort));
    CHECK_FALSE(vpu::reduce(red, ub.data(), abort));
    CHECK_FALSE(vpu::pool(pl, ub.data(), abort));
    CHECK_FALSE(vpu::transpose(tr, ub.data(), abort));
    CHECK(ub == before);

    abort = false;
    CHECK(vpu::vector(vec, ub.data(), abort));
    CHECK(vpu::transpose(tr, ub.data(), abort));
}
