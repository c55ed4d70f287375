// SPDX-License-Identifier: MIT
// The device TLB: translations kept across jobs (hits cost no page-table walk), the contract that
// page-table changes need an invalidation (without one the card keeps using the old page),
// invalidation per context and of everything, isolation between contexts using the same VAs,
// capacity and associativity, invalidation from another thread while a job runs, and an
// invalidation that returns only once no translation from before it is still in use (a copy between
// translation and access has ended), while a posted invalidation (the device's MMIO path) returns
// at once.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include "tpu_test/card.hpp"

using namespace tpu::test;

namespace {

constexpr uint64_t kPage = TPU_PAGE_SIZE;
constexpr uint64_t kSrc = 0x200000;
constexpr uint64_t kDst = 0x300000;

tpu_engine_config tlb_config(uint32_t entries) {
    tpu_engine_config cfg = Card::default_config();
    cfg.ub_bytes = 1u << 20;
    cfg.acc_bytes = 1u << 16;
    cfg.threads = 1;
    cfg.tlb_entries = entries;
    return cfg;
}

// Copies 64 bytes from kSrc to kDst: one page each, plus the program's page.
const Program kCopy{dma_in(TPU_DT_INT8, 1, 64, kSrc, 0, 0, 0),
                    dma_out(TPU_DT_INT8, 1, 64, kDst, 0, 0, 0), halt()};

std::vector<uint8_t> filled(uint8_t value) {
    return std::vector<uint8_t>(64, value);
}

// An address space with kSrc holding `value` and kDst writable.
AddressSpace copy_space(Card &card, uint32_t ctx, uint8_t value) {
    AddressSpace space = card.address_space(ctx);
    space.map(kSrc, kPage, kRead);
    space.map(kDst, kPage, kWrite);
    space.write_vector(kSrc, filled(value));
    return space;
}

// Points kSrc of space at a fresh page holding `value` (page tables only, no invalidation).
void remap_src(HostMemory &mem, AddressSpace &space, uint8_t value) {
    uint64_t page = mem.alloc_page();
    std::vector<uint8_t> data = filled(value);
    mem.write(page, data.data(), data.size());
    space.map_phys(kSrc, page, kRead);
}

} // namespace

TEST_CASE("translations are kept across jobs and counted as misses once", "[tlb]") {
    HostMemory mem;
    Card card(mem, tlb_config(256));
    AddressSpace space = copy_space(card, 1, 7);

    tpu_job_result first = card.run(space, kCopy);
    REQUIRE(first.status == TPU_ERR_NONE);
    CHECK(first.tlb_misses == 3); // program, source and destination pages
    tpu_job_result second = card.run(space, kCopy);
    REQUIRE(second.status == TPU_ERR_NONE);
    CHECK(second.tlb_misses == 0);
    CHECK(space.read_vector<uint8_t>(kDst, 64) == filled(7));
}

TEST_CASE("a remapped page needs an invalidation to be seen", "[tlb]") {
    HostMemory mem;
    Card card(mem, tlb_config(256));
    AddressSpace space = copy_space(card, 1, 1);
    REQUIRE(card.run(space, kCopy).status == TPU_ERR_NONE);
    REQUIRE(space.read_vector<uint8_t>(kDst, 64) == filled(1));

    remap_src(mem, space, 2);

    SECTION("without invalidation the card keeps using the old page (the driver's duty)") {
        REQUIRE(card.run(space, kCopy).status == TPU_ERR_NONE);
        CHECK(space.read_vector<uint8_t>(kDst, 64) == filled(1));
    }
    SECTION("invalidating the context makes the next job walk the tables again") {
        tpu_engine_tlb_invalidate(card.engine(), 1);
        tpu_job_result r = card.run(space, kCopy);
        REQUIRE(r.status == TPU_ERR_NONE);
        CHECK(r.tlb_misses == 3);
        CHECK(space.read_vector<uint8_t>(kDst, 64) == filled(2));
    }
    SECTION("invalidating everything does too") {
        tpu_engine_tlb_invalidate(card.engine(), TPU_TLB_INVAL_ALL);
        REQUIRE(card.run(space, kCopy).status == TPU_ERR_NONE);
        CHECK(space.read_vector<uint8_t>(kDst, 64) == filled(2));
    }
    SECTION("invalidating another context does not") {
        tpu_engine_tlb_invalidate(card.engine(), 2);
        REQUIRE(card.run(space, kCopy).status == TPU_ERR_NONE);
        CHECK(space.read_vector<uint8_t>(kDst, 64) == filled(1));
    }
}

TEST_CASE("an unmapped page faults after invalidation, permissions are re-read", "[tlb]") {
    HostMemory mem;
    Card card(mem, tlb_config(256));
    AddressSpace space = copy_space(card, 1, 3);
    REQUIRE(card.run(space, kCopy).status == TPU_ERR_NONE);

    SECTION("unmap") {
        space.unmap(kSrc, kPage);
        tpu_engine_tlb_invalidate(card.engine(), 1);
        tpu_job_result r = card.run(space, kCopy);
        CHECK(r.status == TPU_ERR_MMU_FAULT);
        CHECK(r.fault_addr == kSrc);
        CHECK(r.error_pc == 0);
    }
    SECTION("write permission revoked") {
        space.protect(kDst, kPage, kRead);
        tpu_engine_tlb_invalidate(card.engine(), 1);
        tpu_job_result r = card.run(space, kCopy);
        CHECK(r.status == TPU_ERR_MMU_FAULT);
        CHECK(r.fault_addr == kDst);
        CHECK(r.error_pc == 1);
    }
}

TEST_CASE("contexts with the same VAs are isolated in the TLB", "[tlb]") {
    HostMemory mem;
    Card card(mem, tlb_config(256));
    AddressSpace one = copy_space(card, 1, 11);
    AddressSpace two = copy_space(card, 2, 22);

    for (int round = 0; round < 2; round++) {
        REQUIRE(card.run(one, kCopy).status == TPU_ERR_NONE);
        REQUIRE(card.run(two, kCopy).status == TPU_ERR_NONE);
        CHECK(one.read_vector<uint8_t>(kDst, 64) == filled(11));
        CHECK(two.read_vector<uint8_t>(kDst, 64) == filled(22));
    }

    // Context 3 has no mapping at kSrc: context 1's cached translation must not serve it.
    AddressSpace three = card.address_space(3);
    three.map(kDst, kPage, kWrite);
    tpu_job_result r = card.run(three, kCopy);
    CHECK(r.status == TPU_ERR_MMU_FAULT);
    CHECK(r.fault_addr == kSrc);

    // Dropping context 2 leaves context 1's entries in place.
    tpu_engine_tlb_invalidate(card.engine(), 2);
    CHECK(card.run(one, kCopy).tlb_misses == 0);
    CHECK(card.run(two, kCopy).tlb_misses == 3);
}

TEST_CASE("a TLB smaller than the working set still translates correctly", "[tlb]") {
    HostMemory mem;
    Card card(mem, tlb_config(1));
    AddressSpace space = copy_space(card, 1, 5);
    for (int i = 0; i < 3; i++) {
        tpu_job_result r = card.run(space, kCopy);
        REQUIRE(r.status == TPU_ERR_NONE);
        CHECK(r.tlb_misses >= 3);
    }
    CHECK(space.read_vector<uint8_t>(kDst, 64) == filled(5));

    tpu_engine_config bad = tlb_config(65537);
    char err[256] = "";
    CHECK(tpu_engine_create(&bad, HostMemory::phys_rw, &mem, err, sizeof(err)) == nullptr);
    CHECK(std::string(err).find("tlb_entries") != std::string::npos);
}

TEST_CASE("a working set of half the TLB stays in it across jobs", "[tlb]") {
    // 512 pages in a 1024-entry TLB: a direct-mapped TLB lost 40 of them to slot conflicts on
    // every job, the card's sets of four ways none.
    constexpr uint32_t kPages = 512;
    HostMemory mem;
    Card card(mem, tlb_config(1024));
    AddressSpace space = card.address_space(1);
    space.map(kSrc, kPages * kPage, kRead);
    const Program read_pages{dma_in(TPU_DT_INT8, kPages, 64, kSrc, kPage, 0, 64), halt()};
    REQUIRE(card.run(space, read_pages).tlb_misses == kPages + 1);
    const tpu_job_result again = card.run(space, read_pages);
    REQUIRE(again.status == TPU_ERR_NONE);
    CHECK(again.tlb_misses < kPages / 20);
}

TEST_CASE("invalidations from another thread while jobs run are safe", "[tlb]") {
    HostMemory mem;
    Card card(mem, tlb_config(64));
    const uint32_t pages = 16;
    AddressSpace space = card.address_space(1);
    space.map(kSrc, pages * kPage, kRead);
    space.map(kDst, pages * kPage, kWrite);
    Program p;
    for (uint32_t i = 0; i < pages; i++) {
        space.write_vector(kSrc + i * kPage, filled(uint8_t(i)));
        p.push_back(dma_in(TPU_DT_INT8, 1, 64, kSrc + i * kPage, 0, 0, 0));
        p.push_back(dma_out(TPU_DT_INT8, 1, 64, kDst + i * kPage, 0, 0, 0));
    }

    std::atomic<bool> done{false};
    std::thread invalidator([&] {
        for (uint32_t n = 0; !done.load(); n++)
            tpu_engine_tlb_invalidate(card.engine(), n % 2 ? 1 : TPU_TLB_INVAL_ALL);
    });
    bool all_ok = true;
    for (int job = 0; job < 200 && all_ok; job++)
        all_ok = card.run(space, p).status == TPU_ERR_NONE;
    done.store(true);
    invalidator.join();

    CHECK(all_ok);
    for (uint32_t i = 0; i < pages; i++)
        CHECK(space.read_vector<uint8_t>(kDst + i * kPage, 64) == filled(uint8_t(i)));
}

namespace {

// Host memory whose writes to one page take a while, as a slow bus would: an invalidation
// that returned while such a write was still going on let the card use a stale translation.
struct SlowPage {
    HostMemory *mem = nullptr;
    uint64_t page = 0;
    std::atomic<int> writes{0};
    std::atomic<bool> invalidated{false};
    std::atomic<int> late{0}; // writes still going on once the invalidation had returned

    static int rw(void *opaque, uint64_t addr, void *buf, uint64_t len, bool is_write) {
        auto *s = static_cast<SlowPage *>(opaque);
        const bool watched = is_write && addr >= s->page && addr < s->page + kPage;
        if (watched) {
            s->writes++;
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        const int ret = HostMemory::phys_rw(s->mem, addr, buf, len, is_write);
        if (watched && s->invalidated.load())
            s->late++;
        return ret;
    }
};

} // namespace

TEST_CASE("an invalidation returns only once no translation from before it is in use", "[tlb]") {
    HostMemory mem;
    Card card(mem, tlb_config(256));
    AddressSpace space = card.address_space(1);
    space.map(kDst, kPage, kWrite);
    Program program;
    for (int i = 0; i < 20000; i++)
        program.push_back(dma_out(TPU_DT_INT8, 1, 64, kDst, 0, 0, 0));
    const uint64_t bytes = program.size() * sizeof(tpu_insn);
    space.map(Card::kProgramVa, bytes, kRead);
    space.write(Card::kProgramVa, program.data(), bytes);

    SlowPage slow;
    slow.mem = &mem;
    slow.page = space.translate(kDst) & ~(kPage - 1);
    tpu_engine_config cfg = tlb_config(256);
    char err[256] = "";
    tpu_engine *eng = tpu_engine_create(&cfg, SlowPage::rw, &slow, err, sizeof(err));
    REQUIRE(eng != nullptr);
    tpu_engine_set_ctx_table(eng, card.contexts().addr(), card.contexts().entries());

    tpu_job_result result{};
    std::thread job([&] { tpu_engine_run(eng, 1, Card::kProgramVa, uint32_t(bytes), &result); });
    while (slow.writes.load() < 20)
        std::this_thread::yield();
    // What a driver does before freeing the page: clear the mapping, invalidate, then free.
    space.unmap(kDst, kPage);
    tpu_engine_tlb_invalidate(eng, 1);
    slow.invalidated = true;
    job.join();
    tpu_engine_destroy(eng);

    CHECK(slow.late.load() == 0);
    CHECK(result.status == TPU_ERR_MMU_FAULT);
    CHECK(result.fault_addr == kDst);
}

namespace {

// Host memory whose writes to one page wait until the test lets them go: a DMA copy held
// between its translation and its access, as a write stuck behind a slow bus would be.
struct BlockedPage {
    HostMemory *mem = nullptr;
    uint64_t page = 0;
    std::mutex lock;
    std::condition_variable changed;
    bool blocked = false, open = false;

    static int rw(void *opaque, uint64_t addr, void *buf, uint64_t len, bool is_write) {
        auto *s = static_cast<BlockedPage *>(opaque);
        if (is_write && addr >= s->page && addr < s->page + kPage) {
            std::unique_lock<std::mutex> guard(s->lock);
            s->blocked = true;
            s->changed.notify_all();
            s->changed.wait(guard, [s] { return s->open; });
        }
        return HostMemory::phys_rw(s->mem, addr, buf, len, is_write);
    }
    void wait_blocked() {
        std::unique_lock<std::mutex> guard(lock);
        changed.wait(guard, [this] { return blocked; });
    }
    void let_go() {
        std::lock_guard<std::mutex> guard(lock);
        open = true;
        changed.notify_all();
    }
};

} // namespace

// The QEMU device posts a guest's TLB_INVAL with tpu_engine_tlb_drop() from its MMIO handler,
// under QEMU's big lock, and completes it from a thread that may wait: no vCPU ever waits for
// the engine (issue 24 item 13). The posted drop must return while a DMA holds a translation.
TEST_CASE("a posted invalidation returns while a DMA holds a translation", "[tlb]") {
    HostMemory mem;
    Card card(mem, tlb_config(256));
    AddressSpace space = copy_space(card, 1, 0x11);
    const uint64_t bytes = kCopy.size() * sizeof(tpu_insn);
    space.map(Card::kProgramVa, bytes, kRead);
    space.write(Card::kProgramVa, kCopy.data(), bytes);

    BlockedPage blocked;
    blocked.mem = &mem;
    blocked.page = space.translate(kDst) & ~(kPage - 1);
    tpu_engine_config cfg = tlb_config(256);
    char err[256] = "";
    tpu_engine *eng = tpu_engine_create(&cfg, BlockedPage::rw, &blocked, err, sizeof(err));
    REQUIRE(eng != nullptr);
    tpu_engine_set_ctx_table(eng, card.contexts().addr(), card.contexts().entries());

    tpu_job_result result{};
    std::thread job([&] { tpu_engine_run(eng, 1, Card::kProgramVa, uint32_t(bytes), &result); });
    blocked.wait_blocked();
    // Both calls run on threads of their own, so that a wait shows as a future not ready
    // instead of hanging the test; only the blocked write's release lets a waiting call end.
    auto drop = std::async(std::launch::async, [&] { tpu_engine_tlb_drop(eng, 1); });
    const bool drop_returned = drop.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
    auto invalidate = std::async(std::launch::async, [&] { tpu_engine_tlb_invalidate(eng, 1); });
    const bool invalidate_waited =
        invalidate.wait_for(std::chrono::milliseconds(200)) == std::future_status::timeout;
    blocked.let_go();
    drop.wait();
    invalidate.wait();
    job.join();
    tpu_engine_destroy(eng);

    CHECK(drop_returned);
    CHECK(invalidate_waited);
    CHECK(result.status == TPU_ERR_NONE);
    CHECK(space.read_vector<uint8_t>(kDst, 64) == filled(0x11));
}
