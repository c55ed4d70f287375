// SPDX-License-Identifier: MIT
// test_ring_generations.cpp - guest test, as root, without tpu.ko (issue 24, item 19): a job
// still running when its queue is reset or its ring reprogrammed must not retire onto the new
// ring. The card tells the jobs of an old ring by generation counters bumped at every
// QCTRL_RESET and ring reprogram; counters of 32 bits wrap after 2^32 of them, and the dropped
// job then retired as if nothing happened, onto a ring where its slot (HEAD) may not exist.
// Run on a card with x-ring-generation-step=4294967296, where every reset or reprogram counts
// as 2^32 of them (tests/vm: vm_ring_generations), and with the test-only hold (x-test-hold):
// the card holds the long job (its TEST_HOLD register, written here directly) until the test
// lets it go or a reset aborts it, so that it is still running however fast the host.
#include "guest_programs.hpp"
#include "raw_card.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>

using namespace guest;

namespace {

constexpr std::uint32_t kCtx = 1;
constexpr std::uint64_t kHaltVa = 0x10000000;
constexpr std::uint64_t kLongVa = 0x20000000;
// The long job's slot: beyond the small ring the test programs while it runs.
constexpr std::uint32_t kLongSlot = 40;
constexpr std::uint32_t kSmallRing = 8;

// The card reset, context kCtx with a HALT program and the long program mapped, queue 0 started
// with kLongSlot quick jobs done and the long job running in slot kLongSlot, held by the card
// before instruction kHangAt.
struct Rig {
    raw::Bar bar{raw::unbound_card()};
    raw::PagePool pool{64};
    raw::Page ctx_table = pool.page();
    raw::AddressSpace space{pool, ctx_table, kCtx};
    raw::Queue queue{bar, pool, 0};
    tpurt::Program long_program = busy_program(kHangMatmuls);
    std::uint64_t last_quick = 0;
    std::uint64_t long_job = 0;

    Rig() {
        REQUIRE(bar.read32(TPU_REG_ID) == TPU_ID_MAGIC);
        REQUIRE(bar.reset());
        REQUIRE((bar.read32(TPU_REG_TEST_HOLD) & TPU_TEST_HOLD_PRESENT) != 0); // x-test-hold
        load(kHaltVa, halt_program());
        load(kLongVa, long_program);
        bar.write64(TPU_REG_CTX_TABLE, ctx_table.phys);
        bar.write32(TPU_REG_IRQ_MASK, 0);
        bar.write32(TPU_REG_CONTROL, TPU_CONTROL_ENABLE);
        queue.start();
        for (std::uint32_t i = 0; i < kLongSlot; i++)
            last_quick = queue.run(kCtx, kHaltVa, TPU_INSN_SIZE);
        REQUIRE(queue.wait(last_quick));
        bar.write32(TPU_REG_TEST_HOLD, TPU_TEST_HOLD_ARM | kHangAt);
        long_job = queue.run(kCtx, kLongVa, std::uint32_t(long_program.size_bytes()));
        REQUIRE(queue.slot_of(long_job) == kLongSlot);
        REQUIRE(raw::poll_until([&] { return held(); }));
        REQUIRE(running());
    }
    ~Rig() {
        bar.write32(TPU_REG_TEST_HOLD, 0);
        bar.write32(TPU_REG_TEST_HOLD, TPU_TEST_HOLD_RELEASE);
        bar.reset();
    }

    // Copies a program into pages of its own, mapped from va on.
    void load(std::uint64_t va, const tpurt::Program &p) {
        const auto *bytes = reinterpret_cast<const std::uint8_t *>(p.insns.data());
        for (std::size_t off = 0; off < p.size_bytes(); off += TPU_PAGE_SIZE) {
            raw::Page page = pool.page();
            std::memcpy(page.ptr, bytes + off,
                        std::min<std::size_t>(TPU_PAGE_SIZE, p.size_bytes() - off));
            space.map(va + off, page.phys, TPU_PTE_READ);
        }
    }

    // Whether the card shows the long job as running (RUN_QUEUE, RUN_SEQNO: spec 1.5).
    bool running() const {
        return bar.read32(TPU_REG_RUN_QUEUE) == TPU_RUN_RUNNING &&
               bar.read64(TPU_REG_RUN_SEQNO) == long_job;
    }
    bool busy() const { return bar.read32(TPU_REG_STATUS) & TPU_STATUS_BUSY; }
    // Whether the card holds the long job (TEST_HELD).
    bool held() const { return bar.read32(TPU_REG_TEST_HELD) == (TPU_TEST_HELD_HELD | kHangAt); }
};

} // namespace

TEST_CASE("a job dropped by a queue reset leaves no trace on the reset queue", "[generations]") {
    Rig rig;
    // The reset aborts the held job: it ends there and must be dropped, as the one 2^32 resets
    // before would not be by a 32-bit count.
    rig.bar.qwrite32(0, TPU_QREG_CONTROL, TPU_QCTRL_RESET);
    rig.queue.restart_at_zero();
    REQUIRE(raw::poll_until([&] { return !rig.busy(); }));

    // A job on the reset queue: the queue bottom half retires (or drops) the long job first.
    rig.bar.qwrite32(0, TPU_QREG_CONTROL, TPU_QCTRL_ENABLE);
    const std::uint64_t after = rig.queue.run(kCtx, kHaltVa, TPU_INSN_SIZE);
    REQUIRE(rig.queue.slot_of(after) == 0);
    REQUIRE(rig.queue.wait(after));
    CHECK(rig.queue.completion(0).status == TPU_ERR_NONE);
    CHECK(rig.bar.qread32(0, TPU_QREG_RING_HEAD) == 1);
    CHECK(rig.bar.read64(TPU_REG_CNT_JOBS_FAILED) == 0);
    INFO("the dropped job's completion record (slot " << kLongSlot << ")");
    CHECK(rig.queue.completion(kLongSlot).flags == 0);
}

TEST_CASE("a job running across a ring reprogram leaves the new ring's HEAD alone",
          "[generations]") {
    Rig rig;
    // Clearing ENABLE lets the job finish; the smaller ring is programmed while it runs.
    rig.bar.qwrite32(0, TPU_QREG_CONTROL, 0);
    rig.bar.qwrite32(0, TPU_QREG_RING_SIZE, kSmallRing);
    INFO("the long job must still run after the reprogram for the test to mean anything");
    REQUIRE(rig.running());
    REQUIRE(rig.held());
    rig.bar.write32(TPU_REG_TEST_HOLD, TPU_TEST_HOLD_RELEASE); // let go, it ends

    REQUIRE(rig.queue.wait(rig.long_job));
    CHECK(rig.queue.completion(kLongSlot).status == TPU_ERR_NONE);
    CHECK(rig.bar.qread32(0, TPU_QREG_RING_SIZE) == kSmallRing);
    INFO("HEAD of the new ring of " << kSmallRing << " entries");
    CHECK(rig.bar.qread32(0, TPU_QREG_RING_HEAD) == 0);
}
