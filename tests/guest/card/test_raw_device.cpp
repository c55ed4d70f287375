// SPDX-License-Identifier: MIT
// test_raw_device.cpp - guest test, as root: tpu.ko is unbound and the card is driven directly
// (BAR0 from sysfs, rings, context table and page tables in locked pages): bad ring
// configurations, garbage ring entries, program-fetch MMU faults, rings in nonexistent memory,
// RESET during a job, per-queue RESET and stop, queue priorities, TLB_INVAL and 128-byte
// completion records (spec 2.4) — after each the card still runs a valid job. Last, tpu.ko is bound
// again and /dev/accel/accel0 runs a job. Needs a card with at least 2 queues (tests/vm passes
// -global tpu.num-queues=4) and the test-only hold (-global tpu.x-test-hold=on), which keeps a busy
// job running until a reset or the test ends it, however fast the host.
#include "guest_programs.hpp"
#include "raw_card.hpp"
#include "uapi_helpers.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <deque>
#include <utility>
#include <vector>

using namespace guest;
using tpurt::Program;
using tpurt::ProgramBuilder;

namespace {

constexpr std::uint32_t kCtx = 1;
constexpr std::uint64_t kCopyVa = 0x10000000;    // the copy program
constexpr std::uint64_t kBusyVa = 0x10100000;    // busy_program()
constexpr std::uint64_t kProgramVa = 0x10200000; // two pages for a test's own program
constexpr std::uint64_t kSrcVa = 0x20000000;
constexpr std::uint64_t kDstVa = 0x30000000;
constexpr std::uint64_t kNowhere = 0x7f00000000ull; // physical: no RAM, no device
constexpr std::uint32_t kCopyBytes = 256;
constexpr unsigned kBusyMatmuls = 120; // ~16 G MACs: long enough to catch the card busy

std::uint32_t program_bytes(const Program &p) {
    return std::uint32_t(p.size_bytes());
}

// DMA_IN of `bytes` int8 from kSrcVa to UB 0, DMA_OUT of them to kDstVa, HALT.
Program copy_program(std::uint32_t bytes) {
    return ProgramBuilder()
        .dma_in(int8_rows(kSrcVa, 0, 1, bytes))
        .dma_out(int8_rows(kDstVa, 0, 1, bytes))
        .halt()
        .finish();
}

// The card reset and programmed with context kCtx (copy and busy programs mapped) and queues
// [0, queues) started. The destructor resets the card before its memory goes away.
struct Rig {
    raw::Bar bar{raw::unbound_card()};
    raw::PagePool pool{96};
    raw::Page ctx_table = pool.page();
    raw::AddressSpace space{pool, ctx_table, kCtx};
    raw::Page copy = pool.page(), busy = pool.page(), prog[2] = {pool.page(), pool.page()};
    raw::Page src = pool.page(), dst = pool.page();
    std::deque<raw::Queue> queues;
    std::uint8_t pattern = 0;

    explicit Rig(unsigned nqueues = 1) {
        REQUIRE(bar.read32(TPU_REG_ID) == TPU_ID_MAGIC);
        REQUIRE(bar.read32(TPU_REG_NUM_QUEUES) >= nqueues);
        REQUIRE(bar.reset());
        load(copy, copy_program(kCopyBytes));
        load(busy, busy_program(kBusyMatmuls));
        space.map(kCopyVa, copy.phys, TPU_PTE_READ);
        space.map(kBusyVa, busy.phys, TPU_PTE_READ);
        space.map(kProgramVa, prog[0].phys, TPU_PTE_READ);
        space.map(kProgramVa + TPU_PAGE_SIZE, prog[1].phys, TPU_PTE_READ);
        space.map(kSrcVa, src.phys, TPU_PTE_READ);
        space.map(kDstVa, dst.phys, TPU_PTE_WRITE);
        for (unsigned q = 0; q < nqueues; q++)
            queues.emplace_back(bar, pool, q);
        start();
    }
    ~Rig() {
        bar.write32(TPU_REG_TEST_HOLD, 0);
        bar.write32(TPU_REG_TEST_HOLD, TPU_TEST_HOLD_RELEASE);
        bar.reset();
    }

    // The next busy job is held before instruction kHangAt (TEST_HOLD); whether one is held.
    void hold_next() {
        REQUIRE((bar.read32(TPU_REG_TEST_HOLD) & TPU_TEST_HOLD_PRESENT) != 0); // x-test-hold
        bar.write32(TPU_REG_TEST_HOLD, TPU_TEST_HOLD_ARM | kHangAt);
    }
    bool held() const { return bar.read32(TPU_REG_TEST_HELD) == (TPU_TEST_HELD_HELD | kHangAt); }

    // Enables the card and lets it run `jobs` busy jobs one at a time, each held before kHangAt
    // until the next hold is armed: the queues of the jobs in the order the card ran them,
    // whatever the host's speed.
    std::vector<unsigned> served_queues(unsigned jobs) {
        std::vector<unsigned> order;
        std::pair<std::uint32_t, std::uint64_t> last{~0u, 0}, now;
        const auto running = [this] {
            return std::pair{bar.read32(TPU_REG_RUN_QUEUE) & TPU_RUN_QUEUE_MASK,
                             bar.read64(TPU_REG_RUN_SEQNO)};
        };
        hold_next();
        bar.write32(TPU_REG_CONTROL, TPU_CONTROL_ENABLE);
        for (unsigned i = 0; i < jobs; i++) {
            // A job released a moment ago may still read as held: RUN names the held one only
            // once it reads the same before and after TEST_HELD.
            REQUIRE(raw::poll_until([&] {
                now = running();
                return now != last && held() && running() == now;
            }));
            order.push_back(now.first);
            last = now;
            if (i + 1 < jobs)
                hold_next(); // one job a hold: arm it for the next one before letting this go
            bar.write32(TPU_REG_TEST_HOLD, TPU_TEST_HOLD_RELEASE);
        }
        return order;
    }

    // Programs the card as after power-on (a global reset clears everything).
    void start() {
        bar.write64(TPU_REG_CTX_TABLE, ctx_table.phys);
        bar.write32(TPU_REG_IRQ_MASK, 0);
        bar.write32(TPU_REG_IRQ_STATUS, TPU_IRQ_DONE | TPU_IRQ_ERROR);
        bar.write32(TPU_REG_CONTROL, TPU_CONTROL_ENABLE);
        for (raw::Queue &q : queues)
            q.start();
    }

    static void load(raw::Page page, const Program &p) {
        REQUIRE(p.size_bytes() <= TPU_PAGE_SIZE);
        std::memcpy(page.ptr, p.insns.data(), p.size_bytes());
    }

    std::uint64_t run_busy(raw::Queue &q, unsigned matmuls = kBusyMatmuls) {
        return q.run(kCtx, kBusyVa, program_bytes(busy_program(matmuls)));
    }

    // Runs the copy program on queue q and checks its result and completion record.
    void check_copy_works(raw::Queue &q) {
        pattern++;
        std::memset(src.ptr, pattern, kCopyBytes);
        std::memset(dst.ptr, 0, kCopyBytes);
        const std::uint64_t seqno = q.run(kCtx, kCopyVa, 3 * TPU_INSN_SIZE);
        REQUIRE(q.wait(seqno));
        const tpu_completion c = q.completion(q.slot_of(seqno));
        CHECK(c.flags == TPU_COMPL_VALID);
        CHECK(c.seqno == seqno);
        CHECK(c.status == TPU_ERR_NONE);
        CHECK(static_cast<std::uint8_t *>(dst.ptr)[0] == pattern);
        CHECK(static_cast<std::uint8_t *>(dst.ptr)[kCopyBytes - 1] == pattern);
    }

    // Runs a program placed at kProgramVa and returns its completion record.
    tpu_completion run_program(raw::Queue &q, const Program &program) {
        const std::vector<union tpu_insn> &p = program.insns;
        std::memcpy(prog[0].ptr, p.data(), std::min<std::size_t>(p.size() * 32, TPU_PAGE_SIZE));
        if (p.size() * 32 > TPU_PAGE_SIZE)
            std::memcpy(prog[1].ptr, p.data() + TPU_PAGE_SIZE / 32, p.size() * 32 - TPU_PAGE_SIZE);
        const std::uint64_t seqno = q.run(kCtx, kProgramVa, program_bytes(program));
        REQUIRE(q.wait(seqno));
        return q.completion(q.slot_of(seqno));
    }

    std::uint8_t dst_byte() const { return static_cast<const std::uint8_t *>(dst.ptr)[0]; }
};

} // namespace

TEST_CASE("the raw card runs a job and reports it", "[raw]") {
    Rig rig;
    CHECK(rig.bar.read32(TPU_REG_VERSION) == TPU_SPEC_VERSION);
    CHECK((rig.bar.read32(TPU_REG_CAPS) & (TPU_CAP_FP32 | TPU_CAP_VPU)) ==
          (TPU_CAP_FP32 | TPU_CAP_VPU));
    rig.check_copy_works(rig.queues[0]);
    CHECK(rig.bar.qread32(0, TPU_QREG_RING_HEAD) == 1);
    CHECK(rig.bar.qread64(0, TPU_QREG_DONE_SEQ) == 1);
    CHECK(rig.bar.read64(TPU_REG_CNT_JOBS_DONE) == 1);
    CHECK(rig.bar.read64(TPU_REG_CNT_DMA_RD) == kCopyBytes);
    CHECK(rig.bar.read64(TPU_REG_CNT_TLB_MISSES) == 3); // program, source, destination
    CHECK((rig.bar.read32(TPU_REG_IRQ_STATUS) & TPU_IRQ_DONE) != 0);
    CHECK(rig.queues[0].completion(0).cycles > 0);
}

TEST_CASE("bad ring configurations put the queue into error", "[raw][ring]") {
    Rig rig;
    raw::Queue &q = rig.queues[0];
    rig.bar.qwrite32(0, TPU_QREG_CONTROL, 0);
    rig.bar.write32(TPU_REG_IRQ_STATUS, TPU_IRQ_DONE | TPU_IRQ_ERROR);

    SECTION("RING_SIZE not a power of two") {
        rig.bar.qwrite32(0, TPU_QREG_RING_SIZE, 48);
    }
    SECTION("RING_SIZE 0") {
        rig.bar.qwrite32(0, TPU_QREG_RING_SIZE, 0);
    }
    SECTION("RING_SIZE above the maximum") {
        rig.bar.qwrite32(0, TPU_QREG_RING_SIZE, 2 * TPU_RING_MAX_ENTRIES);
    }
    SECTION("RING_BASE not 4 KiB aligned") {
        rig.bar.qwrite64(0, TPU_QREG_RING_BASE, q.ring.phys + 64);
        rig.bar.qwrite32(0, TPU_QREG_RING_SIZE, raw::Queue::kEntries);
    }
    SECTION("COMPL_BASE not 64-byte aligned") {
        rig.bar.qwrite64(0, TPU_QREG_COMPL_BASE, q.compl_records.phys + 32);
    }
    SECTION("TAIL at RING_SIZE when enabled") {
        rig.bar.qwrite32(0, TPU_QREG_RING_TAIL, raw::Queue::kEntries);
    }
    SECTION("TAIL beyond RING_SIZE while enabled") {
        rig.bar.qwrite32(0, TPU_QREG_CONTROL, TPU_QCTRL_ENABLE);
        REQUIRE(rig.bar.qread32(0, TPU_QREG_STATUS) == TPU_QSTAT_ACTIVE);
        rig.bar.qwrite32(0, TPU_QREG_RING_TAIL, raw::Queue::kEntries + 5);
    }
    // Enabling checks the configuration (writing ENABLE again would re-check it).
    if (!(rig.bar.qread32(0, TPU_QREG_CONTROL) & TPU_QCTRL_ENABLE))
        rig.bar.qwrite32(0, TPU_QREG_CONTROL, TPU_QCTRL_ENABLE);
    CHECK(rig.bar.qread32(0, TPU_QREG_STATUS) == TPU_QSTAT_ERROR);
    CHECK((rig.bar.read32(TPU_REG_IRQ_STATUS) & TPU_IRQ_ERROR) != 0);
    CHECK(rig.bar.qread32(0, TPU_QREG_RING_HEAD) == 0);

    q.start();
    CHECK(rig.bar.qread32(0, TPU_QREG_STATUS) == TPU_QSTAT_ACTIVE);
    rig.check_copy_works(q);
}

TEST_CASE("COMPL_SIZE 128 gives each job a 128-byte record with its link statistics",
          "[raw][ring]") {
    Rig rig;
    raw::Queue &q = rig.queues[0];
    auto compl_size = [&] { return rig.bar.qread32(0, TPU_QREG_COMPL_SIZE); };
    CHECK((rig.bar.read32(TPU_REG_CAPS) & TPU_CAP_COMPL_LINK) != 0);
    CHECK(compl_size() == TPU_COMPL_SIZE);
    rig.bar.qwrite32(0, TPU_QREG_COMPL_SIZE, TPU_COMPL_SIZE_LINK); // enabled: ignored
    CHECK(compl_size() == TPU_COMPL_SIZE);
    rig.bar.qwrite32(0, TPU_QREG_CONTROL, 0);
    rig.bar.qwrite32(0, TPU_QREG_COMPL_SIZE, 96); // neither 64 nor 128: ignored
    CHECK(compl_size() == TPU_COMPL_SIZE);
    rig.bar.qwrite32(0, TPU_QREG_COMPL_SIZE, TPU_COMPL_SIZE_LINK);
    CHECK(compl_size() == TPU_COMPL_SIZE_LINK);

    // Two copy jobs: their records at 0 and 128, each followed by its link half (all 0: a copy
    // uses no link), nothing written past them.
    auto *bytes = static_cast<std::uint8_t *>(q.compl_records.ptr);
    std::memset(bytes, 0xa5, TPU_PAGE_SIZE);
    q.start();
    for (std::uint64_t seqno = 1; seqno <= 2; seqno++) {
        REQUIRE(q.wait(q.run(kCtx, kCopyVa, 3 * TPU_INSN_SIZE)));
        std::atomic_thread_fence(std::memory_order_seq_cst);
        tpu_completion c;
        tpu_completion_link link;
        std::memcpy(&c, bytes + (seqno - 1) * TPU_COMPL_SIZE_LINK, sizeof(c));
        std::memcpy(&link, bytes + (seqno - 1) * TPU_COMPL_SIZE_LINK + sizeof(c), sizeof(link));
        INFO("job " << seqno);
        CHECK(c.seqno == seqno);
        CHECK(c.flags == TPU_COMPL_VALID);
        CHECK(c.status == TPU_ERR_NONE);
        CHECK(c.cycles > 0);
        const tpu_completion_link zero{};
        CHECK(std::memcmp(&link, &zero, sizeof(link)) == 0);
    }
    CHECK(bytes[2 * TPU_COMPL_SIZE_LINK] == 0xa5);

    // A queue reset keeps COMPL_SIZE; a global reset sets it back to 64.
    rig.bar.qwrite32(0, TPU_QREG_CONTROL, TPU_QCTRL_RESET);
    CHECK(compl_size() == TPU_COMPL_SIZE_LINK);
    REQUIRE(rig.bar.reset());
    CHECK(compl_size() == TPU_COMPL_SIZE);
}

TEST_CASE("garbage ring entries complete with an error status", "[raw][ring]") {
    Rig rig;
    raw::Queue &q = rig.queues[0];
    auto entry = [] {
        tpu_ring_entry e;
        std::memset(&e, 0, sizeof(e));
        e.opcode = TPU_RING_OP_RUN;
        e.ctx_id = kCtx;
        e.program_addr = kCopyVa;
        e.program_size = 3 * TPU_INSN_SIZE;
        return e;
    };
    std::vector<std::pair<tpu_ring_entry, std::uint32_t>> cases;
    tpu_ring_entry e = entry();
    e.opcode = 7;
    cases.emplace_back(e, TPU_ERR_RING_ENTRY);
    e = entry();
    e.flags = 1;
    cases.emplace_back(e, TPU_ERR_RING_ENTRY);
    e = entry();
    e.reserved[3] = 0xdead;
    cases.emplace_back(e, TPU_ERR_RING_ENTRY);
    e = entry();
    e.ctx_id = rig.bar.read32(TPU_REG_NUM_CTX);
    cases.emplace_back(e, TPU_ERR_BAD_CTX);
    e = entry();
    e.ctx_id = kCtx + 1; // its context-table entry is not valid
    cases.emplace_back(e, TPU_ERR_BAD_CTX);
    e = entry();
    e.program_size = 0;
    cases.emplace_back(e, TPU_ERR_PROGRAM);
    e = entry();
    e.program_size = 33;
    cases.emplace_back(e, TPU_ERR_PROGRAM);
    std::memset(&e, 0xa5, sizeof(e));
    cases.emplace_back(e, TPU_ERR_RING_ENTRY);

    std::vector<std::uint64_t> seqnos;
    for (const auto &[bad, status] : cases)
        seqnos.push_back(q.submit(bad));
    REQUIRE(q.wait(seqnos.back()));
    for (std::size_t i = 0; i < cases.size(); i++) {
        INFO("case " << i);
        const tpu_completion c = q.completion(q.slot_of(seqnos[i]));
        CHECK(c.flags == TPU_COMPL_VALID);
        CHECK(c.seqno == seqnos[i]);
        CHECK(c.status == cases[i].second);
    }
    CHECK(rig.bar.read64(TPU_REG_CNT_JOBS_FAILED) == cases.size());
    CHECK(rig.bar.qread32(0, TPU_QREG_STATUS) == TPU_QSTAT_ACTIVE);
    rig.check_copy_works(q);
}

TEST_CASE("MMU faults of program fetch report the device VA", "[raw][mmu]") {
    Rig rig;
    raw::Queue &q = rig.queues[0];

    SECTION("program at an unmapped address") {
        const std::uint64_t seqno = q.run(kCtx, 0x50000000, 32);
        REQUIRE(q.wait(seqno));
        const tpu_completion c = q.completion(q.slot_of(seqno));
        CHECK(c.status == TPU_ERR_MMU_FAULT);
        CHECK(c.error_pc == 0);
        CHECK(c.fault_addr == 0x50000000);
        CHECK(rig.bar.read64(TPU_REG_ERR_ADDR) == 0x50000000);
    }
    SECTION("program running into an unmapped page") {
        rig.space.unmap(kProgramVa + TPU_PAGE_SIZE);
        ProgramBuilder p;
        for (std::size_t i = 0; i < TPU_PAGE_SIZE / 32 + 4; i++)
            p.nop();
        const tpu_completion c = rig.run_program(q, p.finish());
        CHECK(c.status == TPU_ERR_MMU_FAULT);
        CHECK(c.error_pc == TPU_PAGE_SIZE / 32);
        CHECK(c.fault_addr == kProgramVa + TPU_PAGE_SIZE);
    }
    SECTION("program in a page without READ") {
        rig.space.map(kProgramVa, rig.prog[0].phys, TPU_PTE_WRITE);
        const tpu_completion c = rig.run_program(q, halt_program());
        CHECK(c.status == TPU_ERR_MMU_FAULT);
        CHECK(c.fault_addr == kProgramVa);
    }
    SECTION("DMA_OUT to a read-only page, DMA_IN beyond the 39-bit space") {
        tpu_completion c = rig.run_program(
            q, ProgramBuilder().nop().dma_out(int8_rows(kSrcVa + 8, 0, 1, 8)).finish());
        CHECK(c.status == TPU_ERR_MMU_FAULT);
        CHECK(c.error_pc == 1);
        CHECK(c.fault_addr == kSrcVa + 8);
        c = rig.run_program(q, ProgramBuilder().dma_in(int8_rows(1ull << 39, 0, 1, 8)).finish());
        CHECK(c.status == TPU_ERR_MMU_FAULT);
        CHECK(c.fault_addr == 1ull << 39);
    }
    CHECK(rig.bar.read32(TPU_REG_ERR_CODE) == TPU_ERR_MMU_FAULT);
    CHECK(rig.bar.read32(TPU_REG_ERR_QUEUE) == 0);
    CHECK(rig.bar.read64(TPU_REG_CNT_MMU_FAULTS) >= 1);
    CHECK((rig.bar.read32(TPU_REG_IRQ_STATUS) & TPU_IRQ_ERROR) != 0);
    rig.check_copy_works(q);
}

TEST_CASE("a ring or completion area in nonexistent memory stops the queue", "[raw][ring]") {
    Rig rig;
    raw::Queue &q = rig.queues[0];
    rig.bar.qwrite32(0, TPU_QREG_CONTROL, 0);

    SECTION("ring") {
        rig.bar.qwrite64(0, TPU_QREG_RING_BASE, kNowhere);
        rig.bar.qwrite32(0, TPU_QREG_RING_SIZE, raw::Queue::kEntries);
    }
    SECTION("completion records") {
        rig.bar.qwrite64(0, TPU_QREG_COMPL_BASE, kNowhere);
        static_cast<tpu_ring_entry *>(q.ring.ptr)[0] =
            tpu_ring_entry{TPU_RING_OP_RUN, kCtx, 1, kCopyVa, 3 * TPU_INSN_SIZE, 0, {0, 0, 0, 0}};
    }
    rig.bar.qwrite32(0, TPU_QREG_CONTROL, TPU_QCTRL_ENABLE);
    REQUIRE(rig.bar.qread32(0, TPU_QREG_STATUS) == TPU_QSTAT_ACTIVE);
    rig.bar.qwrite32(0, TPU_QREG_RING_TAIL, 1);
    CHECK(raw::poll_until([&] { return rig.bar.qread32(0, TPU_QREG_STATUS) == TPU_QSTAT_ERROR; }));
    CHECK(rig.bar.qread32(0, TPU_QREG_RING_HEAD) == 0);
    CHECK(rig.bar.qread64(0, TPU_QREG_DONE_SEQ) == 0);
    CHECK((rig.bar.read32(TPU_REG_IRQ_STATUS) & TPU_IRQ_ERROR) != 0);

    q.start();
    rig.check_copy_works(q);
}

TEST_CASE("RESET in the middle of a job stops it and clears the card", "[raw][reset]") {
    Rig rig;
    raw::Queue &q = rig.queues[0];
    rig.hold_next();
    const std::uint64_t busy = rig.run_busy(q);
    rig.run_busy(q);
    REQUIRE(raw::poll_until([&] { return rig.held(); }));
    REQUIRE(rig.bar.read32(TPU_REG_STATUS) & TPU_STATUS_BUSY);

    REQUIRE(rig.bar.reset());
    CHECK(rig.bar.read32(TPU_REG_STATUS) == TPU_STATUS_READY);
    CHECK(rig.bar.read32(TPU_REG_CONTROL) == 0);
    CHECK(rig.bar.read64(TPU_REG_CTX_TABLE) == 0);
    CHECK(rig.bar.read32(TPU_REG_IRQ_STATUS) == 0);
    CHECK(rig.bar.qread32(0, TPU_QREG_RING_SIZE) == 0);
    CHECK(rig.bar.qread32(0, TPU_QREG_RING_HEAD) == 0);
    CHECK(rig.bar.qread32(0, TPU_QREG_CONTROL) == 0);
    CHECK(rig.bar.qread64(0, TPU_QREG_DONE_SEQ) == 0);
    CHECK(rig.bar.read64(TPU_REG_CNT_JOBS_DONE) == 0);
    CHECK(rig.bar.read64(TPU_REG_CNT_CYCLES) == 0);
    // The aborted job leaves no completion record.
    CHECK(q.completion(q.slot_of(busy)).flags == 0);

    rig.start();
    rig.check_copy_works(q);
}

TEST_CASE("per-queue RESET drops only that queue's jobs", "[raw][queue]") {
    Rig rig(2);
    raw::Queue &q0 = rig.queues[0], &q1 = rig.queues[1];
    rig.hold_next();
    const std::uint64_t busy = rig.run_busy(q1);
    const std::uint64_t queued = rig.run_busy(q1);
    REQUIRE(raw::poll_until([&] { return rig.held(); }));

    // A job waiting on queue 0 while queue 1 is reset.
    std::memset(rig.src.ptr, 0x5a, kCopyBytes);
    const std::uint64_t copy = q0.run(kCtx, kCopyVa, 3 * TPU_INSN_SIZE);
    rig.bar.qwrite32(1, TPU_QREG_CONTROL, TPU_QCTRL_RESET | TPU_QCTRL_ENABLE);
    q1.restart_at_zero();
    CHECK(rig.bar.qread32(1, TPU_QREG_RING_HEAD) == 0);
    CHECK(rig.bar.qread32(1, TPU_QREG_RING_TAIL) == 0);
    CHECK(rig.bar.qread32(1, TPU_QREG_STATUS) == TPU_QSTAT_ACTIVE);

    REQUIRE(q0.wait(copy));
    CHECK(q0.completion(q0.slot_of(copy)).status == TPU_ERR_NONE);
    CHECK(rig.dst_byte() == 0x5a);
    REQUIRE(raw::poll_until([&] { return !(rig.bar.read32(TPU_REG_STATUS) & TPU_STATUS_BUSY); }));
    CHECK(rig.bar.qread64(1, TPU_QREG_DONE_SEQ) == 0);
    CHECK(q1.completion(q1.slot_of(busy)).flags == 0);
    CHECK(q1.completion(q1.slot_of(queued)).flags == 0);
    CHECK(rig.bar.read64(TPU_REG_CNT_JOBS_FAILED) == 0);

    SECTION("the reset queue runs new jobs from slot 0") {
        rig.check_copy_works(q1);
        CHECK(q1.completion(0).flags == TPU_COMPL_VALID);
    }
    SECTION("RESET clears a queue error") {
        rig.bar.qwrite32(1, TPU_QREG_RING_TAIL, raw::Queue::kEntries);
        REQUIRE(rig.bar.qread32(1, TPU_QREG_STATUS) == TPU_QSTAT_ERROR);
        rig.bar.qwrite32(1, TPU_QREG_CONTROL, TPU_QCTRL_RESET | TPU_QCTRL_ENABLE);
        CHECK(rig.bar.qread32(1, TPU_QREG_STATUS) == TPU_QSTAT_ACTIVE);
        rig.check_copy_works(q1);
    }
}

TEST_CASE("clearing a queue's ENABLE lets the running job finish", "[raw][queue]") {
    Rig rig;
    raw::Queue &q = rig.queues[0];
    rig.hold_next();
    const std::uint64_t first = rig.run_busy(q);
    const std::uint64_t second = rig.run_busy(q, 20);
    REQUIRE(raw::poll_until([&] { return rig.held(); }));
    rig.bar.qwrite32(0, TPU_QREG_CONTROL, 0);
    rig.bar.write32(TPU_REG_TEST_HOLD, TPU_TEST_HOLD_RELEASE); // the first job goes on

    REQUIRE(q.wait(first));
    CHECK(q.completion(q.slot_of(first)).status == TPU_ERR_NONE);
    REQUIRE(raw::poll_until([&] { return !(rig.bar.read32(TPU_REG_STATUS) & TPU_STATUS_BUSY); }));
    CHECK(rig.bar.qread32(0, TPU_QREG_RING_HEAD) == 1);
    CHECK(rig.bar.qread64(0, TPU_QREG_DONE_SEQ) == first);

    rig.bar.qwrite32(0, TPU_QREG_CONTROL, TPU_QCTRL_ENABLE);
    REQUIRE(q.wait(second));
    CHECK(q.completion(q.slot_of(second)).status == TPU_ERR_NONE);
    rig.check_copy_works(q);
}

TEST_CASE("queues are served by priority, round robin within one", "[raw][queue]") {
    Rig rig(2);
    const unsigned jobs = 3, matmuls = 25;
    rig.bar.write32(TPU_REG_CONTROL, 0);

    SECTION("a high-priority queue's jobs run before a low one's queued earlier") {
        rig.bar.qwrite32(1, TPU_QREG_PRIORITY, TPU_QUEUE_MAX_PRIORITY);
        rig.bar.qwrite32(1, TPU_QREG_PRIORITY, TPU_QUEUE_MAX_PRIORITY + 1); // ignored
        CHECK(rig.bar.qread32(1, TPU_QREG_PRIORITY) == TPU_QUEUE_MAX_PRIORITY);
        for (unsigned i = 0; i < jobs; i++)
            rig.run_busy(rig.queues[0], matmuls);
        for (unsigned i = 0; i < jobs; i++)
            rig.run_busy(rig.queues[1], matmuls);
        CHECK(rig.served_queues(2 * jobs) == std::vector<unsigned>{1, 1, 1, 0, 0, 0});
    }
    SECTION("equal priorities alternate") {
        rig.bar.qwrite32(0, TPU_QREG_PRIORITY, 2);
        rig.bar.qwrite32(1, TPU_QREG_PRIORITY, 2);
        for (unsigned i = 0; i < jobs; i++) {
            rig.run_busy(rig.queues[0], matmuls);
            rig.run_busy(rig.queues[1], matmuls);
        }
        const std::vector<unsigned> order = rig.served_queues(2 * jobs);
        REQUIRE(order.size() == 2 * jobs);
        for (unsigned i = 1; i < order.size(); i++)
            CHECK(order[i] != order[i - 1]);
    }
    REQUIRE(raw::poll_until([&] {
        return rig.bar.qread64(0, TPU_QREG_DONE_SEQ) == jobs &&
               rig.bar.qread64(1, TPU_QREG_DONE_SEQ) == jobs;
    }));
    for (raw::Queue &q : rig.queues)
        rig.check_copy_works(q);
}

TEST_CASE("TLB_INVAL makes remapped pages visible", "[raw][tlb]") {
    Rig rig;
    raw::Queue &q = rig.queues[0];
    rig.check_copy_works(q);
    const std::uint64_t misses = rig.bar.read64(TPU_REG_CNT_TLB_MISSES);
    rig.check_copy_works(q);
    CHECK(rig.bar.read64(TPU_REG_CNT_TLB_MISSES) == misses); // all hits

    raw::Page other = rig.pool.page();
    std::memset(other.ptr, 0xee, kCopyBytes);
    std::memset(rig.src.ptr, 0x11, kCopyBytes);
    rig.space.map(kSrcVa, other.phys, TPU_PTE_READ);
    auto copy = [&] {
        const std::uint64_t seqno = q.run(kCtx, kCopyVa, 3 * TPU_INSN_SIZE);
        REQUIRE(q.wait(seqno));
        REQUIRE(q.completion(q.slot_of(seqno)).status == TPU_ERR_NONE);
        return rig.dst_byte();
    };

    // Without an invalidation the card keeps the old translation (the host's duty).
    CHECK(copy() == 0x11);
    SECTION("TLB_INVAL of the context") {
        rig.bar.write32(TPU_REG_TLB_INVAL, kCtx + 1); // another context: no effect
        CHECK(copy() == 0x11);
        rig.bar.write32(TPU_REG_TLB_INVAL, kCtx);
        CHECK(copy() == 0xee);
        CHECK(rig.bar.read64(TPU_REG_CNT_TLB_MISSES) > misses);
    }
    SECTION("TLB_INVAL of everything") {
        rig.bar.write32(TPU_REG_TLB_INVAL, rig.bar.read32(TPU_REG_NUM_CTX)); // ignored
        CHECK(copy() == 0x11);
        rig.bar.write32(TPU_REG_TLB_INVAL, TPU_TLB_INVAL_ALL);
        CHECK(copy() == 0xee);
    }
    SECTION("a global reset") {
        REQUIRE(rig.bar.reset());
        rig.start();
        CHECK(copy() == 0xee);
    }
}

TEST_CASE("tpu.ko binds again and runs a job", "[raw][driver]") {
    raw::bind_driver(raw::unbound_card());
    uapi::RawBo src(TPU_PAGE_SIZE), dst(TPU_PAGE_SIZE);
    std::memset(src.map, 0x3c, 64);
    uapi::SubmittedProgram job(ProgramBuilder()
                                   .dma_in(int8_rows(src.device_addr, 0, 1, 64))
                                   .dma_out(int8_rows(dst.device_addr, 0, 1, 64))
                                   .halt()
                                   .finish(),
                               {src.handle, dst.handle});
    struct drm_tpu_wait result;
    REQUIRE(uapi::wait_job(job.job_id(), result) == 0);
    CHECK(result.status == TPU_ERR_NONE);
    CHECK(static_cast<std::uint8_t *>(dst.map)[63] == 0x3c);
}
