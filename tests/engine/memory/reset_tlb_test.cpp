// SPDX-License-Identifier: MIT
// The TLB against resets and invalidations while a job runs (issue 24, items 16 and 17):
// tpu_engine_reset() empties the TLB, also of the translations a job made after its abort was
// requested, so a context id reused after a reset reaches its new page tables; and a running
// DMA of one-byte rows over distinct pages lets a waiting invalidation through every
// Mmu::kHoldTranslations translations instead of holding the MMU's use lock for all of them.
// Measured in translations (page-table walks seen by the memory callback), not in time.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "tpu_test/card.hpp"

using namespace tpu::test;

namespace {

constexpr uint64_t kPage = TPU_PAGE_SIZE;
constexpr uint64_t kSrc = 0x200000;
constexpr uint64_t kDst = 0x300000;
// A DMA_IN of kRows one-byte rows, one per page from kRowsVa.
constexpr uint64_t kRowsVa = 0x10000000;
constexpr uint16_t kRows = 65535;

const Program kCopy{dma_in(TPU_DT_INT8, 1, 64, kSrc, 0, 0, 0),
                    dma_out(TPU_DT_INT8, 1, 64, kDst, 0, 0, 0), halt()};
const Program kRowsIn{dma_in(TPU_DT_INT8, kRows, 1, kRowsVa, uint32_t(kPage), 0, 1), halt()};

// An engine on HostMemory whose memory callback counts its calls (page-table walks: the
// program and row data go through mapped pages) and holds the job at call gate_at until the
// test opens the gate.
struct CountingCard {
    explicit CountingCard(uint32_t tlb_entries) : table(mem, 4) {
        tpu_engine_config cfg = Card::default_config();
        cfg.ub_bytes = 1u << 20;
        cfg.acc_bytes = 1u << 16;
        cfg.threads = 1;
        cfg.tlb_entries = tlb_entries;
        char err[256] = "";
        engine.reset(tpu_engine_create(&cfg, rw, this, err, sizeof(err)));
        REQUIRE(engine);
        tpu_engine_set_phys_map(engine.get(), map, unmap);
        tpu_engine_set_ctx_table(engine.get(), table.addr(), table.entries());
    }

    static int rw(void *opaque, uint64_t addr, void *buf, uint64_t len, bool is_write) {
        auto *c = static_cast<CountingCard *>(opaque);
        if (c->calls.fetch_add(1) + 1 == c->gate_at)
            while (!c->gate_open.load())
                std::this_thread::yield();
        return HostMemory::phys_rw(&c->mem, addr, buf, len, is_write);
    }
    static void *map(void *opaque, uint64_t addr, uint64_t len, bool is_write) {
        return HostMemory::phys_map(&static_cast<CountingCard *>(opaque)->mem, addr, len, is_write);
    }
    static void unmap(void *opaque, void *ptr, uint64_t len, bool is_write) {
        HostMemory::phys_unmap(&static_cast<CountingCard *>(opaque)->mem, ptr, len, is_write);
    }

    // ctx 1 with every row page of kRowsIn mapped (to one physical page) and the program.
    void map_rows() {
        AddressSpace space(mem, table, 1);
        const uint64_t page = mem.alloc_page();
        for (uint64_t r = 0; r < kRows; r++)
            space.map_phys(kRowsVa + r * kPage, page, kRead);
        const uint64_t bytes = kRowsIn.size() * sizeof(tpu_insn);
        space.map(Card::kProgramVa, bytes, kRead);
        space.write(Card::kProgramVa, kRowsIn.data(), bytes);
    }

    tpu_job_result run_rows() {
        tpu_job_result r{};
        tpu_engine_run(engine.get(), 1, Card::kProgramVa,
                       uint32_t(kRowsIn.size() * sizeof(tpu_insn)), &r);
        return r;
    }

    void wait_for_calls(uint64_t n) const {
        while (calls.load() < n)
            std::this_thread::yield();
    }

    struct Destroy {
        void operator()(tpu_engine *e) const { tpu_engine_destroy(e); }
    };
    HostMemory mem{1ull << 30};
    ContextTable table;
    std::atomic<uint64_t> calls{0};
    uint64_t gate_at = 3000; // a thousand rows in
    std::atomic<bool> gate_open{false};
    std::unique_ptr<tpu_engine, Destroy> engine;
};

tpu_engine_config small_tlb() {
    tpu_engine_config cfg = Card::default_config();
    cfg.ub_bytes = 1u << 20;
    cfg.acc_bytes = 1u << 16;
    cfg.threads = 1;
    cfg.tlb_entries = 256;
    return cfg;
}

// Context ctx of card anew (a fresh page table, as a driver reusing the id builds it): kSrc
// holds `value`, kDst is writable and zero.
AddressSpace fresh_copy_space(Card &card, uint32_t ctx, uint8_t value) {
    AddressSpace space = card.address_space(ctx);
    space.map(kSrc, kPage, kRead);
    space.map(kDst, kPage, kWrite);
    space.write_vector(kSrc, std::vector<uint8_t>(64, value));
    return space;
}

} // namespace

TEST_CASE("a reset empties the TLB: a reused context id sees its new page tables", "[tlb][reset]") {
    HostMemory mem;
    Card card(mem, small_tlb());
    AddressSpace before = fresh_copy_space(card, 1, 1);
    REQUIRE(card.run(before, kCopy).status == TPU_ERR_NONE);
    REQUIRE(before.read_vector<uint8_t>(kDst, 64) == std::vector<uint8_t>(64, 1));

    tpu_engine_reset(card.engine());
    AddressSpace after = fresh_copy_space(card, 1, 2);
    REQUIRE(card.run(after, kCopy).status == TPU_ERR_NONE);
    CHECK(after.read_vector<uint8_t>(kDst, 64) == std::vector<uint8_t>(64, 2));
    CHECK(before.read_vector<uint8_t>(kDst, 64) == std::vector<uint8_t>(64, 1));
}

TEST_CASE("a job aborted while it translates leaves no TLB entry behind its reset",
          "[tlb][reset]") {
    CountingCard card(8192);
    card.map_rows();
    tpu_job_result result{};
    std::thread job([&] { result = card.run_rows(); });
    card.wait_for_calls(card.gate_at); // the job filled the TLB as it went, and waits
    tpu_engine_abort(card.engine.get());
    card.gate_open = true;
    job.join();
    CHECK(result.status == TPU_ERR_ABORTED);
    tpu_engine_reset(card.engine.get());

    // Context 1 again, its rows now unmapped: every row must walk and fault at the first.
    AddressSpace reused(card.mem, card.table, 1);
    const uint64_t bytes = kRowsIn.size() * sizeof(tpu_insn);
    reused.map(Card::kProgramVa, bytes, kRead);
    reused.write(Card::kProgramVa, kRowsIn.data(), bytes);
    const tpu_job_result r = card.run_rows();
    CHECK(r.status == TPU_ERR_MMU_FAULT);
    CHECK(r.fault_addr == kRowsVa);
}

TEST_CASE("a DMA of one-byte rows over distinct pages lets an invalidation through promptly",
          "[tlb][dma]") {
    // Translations (3 walk reads each, the TLB holding one entry) made while an invalidation
    // waits, over three tries. The job waits in a walk, with the use lock held, until the
    // invalidation has had 20 ms to start waiting; it has more than 60,000 rows left then, so
    // holding the lock for the whole transfer shows as tens of thousands.
    uint64_t fewest = ~uint64_t(0);
    for (int attempt = 0; attempt < 3; attempt++) {
        CountingCard card(1);
        card.map_rows();
        tpu_job_result result{};
        std::thread job([&] { result = card.run_rows(); });
        card.wait_for_calls(card.gate_at);
        std::thread opener([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            card.gate_open = true;
        });
        const uint64_t start = card.calls.load();
        tpu_engine_tlb_invalidate(card.engine.get(), TPU_TLB_INVAL_ALL);
        const uint64_t end = card.calls.load();
        opener.join();
        job.join();
        REQUIRE(result.status == TPU_ERR_NONE);
        fewest = std::min(fewest, (end - start) / 3);
    }
    INFO("fewest translations made while an invalidation waited: " << fewest);
    CHECK(fewest <= 2 * 64);
}
