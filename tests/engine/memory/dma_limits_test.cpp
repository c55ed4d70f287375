// SPDX-License-Identifier: MIT
// The DMA instructions' bound on one instruction's work (docs/hardware.md section 6): DMA_IN and
// DMA_OUT move at most as many bytes as the on-chip memory they touch holds (the accumulators for
// DMA_OUT with SRC_ACC), checked at decode with rows that overlap (stride 0) so every range
// fits; LOAD_W from host memory is bounded by the array. And abort requests stopping a long DMA
// between rows: a DMA_OUT leaves the prefix of rows it wrote, a DMA_IN's destination is cleared
// for the next job.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "rig.hpp"

using namespace tpu::test;

namespace {

constexpr uint32_t kUb = Rig::kUb;   // 64 KiB
constexpr uint32_t kAcc = Rig::kAcc; // 16 KiB
constexpr uint64_t kHost = Rig::kHost;

// The instruction at index 1 (after a NOP), then HALT.
tpu_job_result run_one(Rig &rig, const tpu_insn &insn) {
    return rig.run(Program{nop(), insn, halt()});
}

struct LimitCase {
    const char *what;
    tpu_insn under; // the largest allowed work
    tpu_insn over;  // one step more
};

// Host memory whose every access by the engine takes kAccessDelay while slow is set, so a DMA of
// thousands of rows runs for seconds. With hold_at set, the access of that number (of reads, or
// of writes for hold_writes) waits until abort_sent: another thread's abort lands inside the DMA
// whatever the host's speed.
struct SlowMemory {
    static constexpr auto kAccessDelay = std::chrono::milliseconds(1);

    static int rw(void *opaque, uint64_t addr, void *buf, uint64_t len, bool is_write) {
        auto *self = static_cast<SlowMemory *>(opaque);
        if (self->slow.load())
            std::this_thread::sleep_for(kAccessDelay);
        if (is_write == self->hold_writes &&
            (is_write ? self->writes : self->reads).fetch_add(1) + 1 == self->hold_at) {
            self->held = true;
            self->held.notify_all();
            self->abort_sent.wait(false);
        }
        return HostMemory::phys_rw(&self->mem, addr, buf, len, is_write);
    }

    HostMemory &mem;
    std::atomic<bool> slow{true};
    uint64_t hold_at = 0; // 0: never
    bool hold_writes = false;
    std::atomic<uint64_t> reads{0}, writes{0};
    std::atomic<bool> held{false}, abort_sent{false};
};

// A default-sized card (16 MiB unified buffer) on SlowMemory. The Card provides the context
// table and address spaces; programs run on an engine of the same configuration that reaches
// host memory through SlowMemory.
struct SlowCard {
    struct Destroy {
        void operator()(tpu_engine *e) const { tpu_engine_destroy(e); }
    };

    static tpu_engine_config config(uint32_t mode) {
        tpu_engine_config cfg = Card::default_config();
        cfg.threads = 1;
        cfg.mode = mode;
        return cfg;
    }

    explicit SlowCard(uint32_t mode) : card(mem, config(mode)), space(card.address_space(0)) {
        char err[256] = "";
        engine.reset(tpu_engine_create(&card.config(), SlowMemory::rw, &memory, err, sizeof(err)));
        if (!engine)
            throw std::runtime_error(std::string("SlowCard: ") + err);
        tpu_engine_set_ctx_table(engine.get(), card.contexts().addr(), card.contexts().entries());
    }

    tpu_job_result run(const Program &p) {
        const uint64_t bytes = p.size() * sizeof(tpu_insn);
        space.map(Card::kProgramVa, bytes, kRead);
        space.write(Card::kProgramVa, p.data(), bytes);
        tpu_job_result r{};
        tpu_engine_run(engine.get(), space.ctx_id(), Card::kProgramVa, uint32_t(bytes), &r);
        return r;
    }

    // Runs p while another thread calls tpu_engine_abort once the job's read (or write, for
    // writes) number `at` has started, which waits for it; *late = how long the job went on
    // after the abort request.
    tpu_job_result run_aborted(const Program &p, uint64_t at, bool writes,
                               std::chrono::steady_clock::duration *late) {
        memory.hold_at = at;
        memory.hold_writes = writes;
        std::chrono::steady_clock::time_point abort_time;
        std::thread aborter([&] {
            memory.held.wait(false);
            abort_time = std::chrono::steady_clock::now();
            tpu_engine_abort(engine.get());
            memory.abort_sent = true;
            memory.abort_sent.notify_all();
        });
        const tpu_job_result r = run(p);
        const auto end = std::chrono::steady_clock::now();
        aborter.join();
        *late = end - abort_time;
        return r;
    }

    HostMemory mem{64ull << 20};
    Card card;
    AddressSpace space;
    SlowMemory memory{mem};
    std::unique_ptr<tpu_engine, Destroy> engine;
};

} // namespace

TEST_CASE("one DMA moves at most the on-chip memory it touches", "[dma][decoder]") {
    const uint32_t mode = GENERATE(from_range(std::begin(kModes), std::end(kModes)));
    Rig rig(mode);
    const LimitCase cases[] = {
        {"DMA_IN INT8", dma_in(TPU_DT_INT8, 2, kUb / 2, kHost, 0, 0, 0),
         dma_in(TPU_DT_INT8, 2, kUb / 2 + 1, kHost, 0, 0, 0)},
        {"DMA_IN FP32", dma_in(TPU_DT_FP32, kUb / 64, 16, kHost, 0, 0x40, 0),
         dma_in(TPU_DT_FP32, kUb / 64 + 1, 16, kHost, 0, 0x40, 0)},
        {"DMA_OUT BF16 from the UB", dma_out(TPU_DT_BF16, kUb / 64, 32, kHost, 0, 0x100, 0),
         dma_out(TPU_DT_BF16, kUb / 64 + 1, 32, kHost, 0, 0x100, 0)},
        // Over the accumulators' 16 KiB, well within the UB's 64 KiB.
        {"DMA_OUT INT32 from the ACC", dma_out_acc(TPU_DT_INT32, kAcc / 64, 16, kHost, 0, 0, 0),
         dma_out_acc(TPU_DT_INT32, kAcc / 64 + 1, 16, kHost, 0, 0, 0)},
        {"DMA_OUT FP32 from the ACC", dma_out_acc(TPU_DT_FP32, 1, kAcc / 4, kHost, 0, 0, 0),
         dma_out_acc(TPU_DT_FP32, 2, kAcc / 4, kHost, 0, 0, 0)},
        // The tile bounds a LOAD_W from host memory even with every row read from one place.
        {"LOAD_W from host (the array)", load_w_host(TPU_DT_FP32, 16, 16, kHost, 0),
         load_w_host(TPU_DT_FP32, 17, 16, kHost, 0)},
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
        CHECK(r.dma_read_bytes == 0);
        CHECK(r.dma_write_bytes == 0);
    }
}

TEST_CASE("the DMA work limit is a format check, before the ranges", "[dma][decoder]") {
    Rig rig(TPU_ENGINE_FAST);
    // Over the limit and its row past the UB: BAD_OPERAND wins.
    tpu_job_result r = run_one(rig, dma_in(TPU_DT_INT8, 3, kUb / 2, kHost, 0, kUb / 2 + 16, 0));
    CHECK(r.status == TPU_ERR_BAD_OPERAND);
    CHECK(r.error_pc == 1);
    CHECK(r.fault_addr == 0);
    // The largest fields: 65535 rows of 65535 FP32 elements, 16 GiB, do not overflow the check.
    r = run_one(rig, dma_in(TPU_DT_FP32, 65535, 65535, kHost, 0, 0, 0xfffffffc));
    CHECK(r.status == TPU_ERR_BAD_OPERAND);
    CHECK(r.error_pc == 1);
    CHECK(r.fault_addr == 0);

    // Rows that do not overlap are within the limit; the second one ends past the memory.
    r = run_one(rig, dma_in(TPU_DT_INT8, 2, kUb / 2, kHost, 0, 0x10, kUb / 2));
    CHECK(r.status == TPU_ERR_UB_RANGE);
    CHECK(r.error_pc == 1);
    CHECK(r.fault_addr == kUb);
    r = run_one(rig, dma_out_acc(TPU_DT_INT32, 2, kAcc / 8, kHost, 0, 4, kAcc / 2));
    CHECK(r.status == TPU_ERR_ACC_RANGE);
    CHECK(r.error_pc == 1);
    CHECK(r.fault_addr == kAcc);
}

TEST_CASE("abort stops a long DMA_OUT between rows, after a prefix of them", "[dma][abort]") {
    const uint32_t mode = GENERATE(from_range(std::begin(kModes), std::end(kModes)));
    CAPTURE(mode);
    SlowCard card(mode);
    constexpr uint64_t kIn = 0x100000, kOut = 0x200000;
    constexpr uint32_t kRows = 65535, kRowBytes = 64;
    const std::vector<uint8_t> pattern(kRowBytes, 0x5a);
    card.space.map(kIn, TPU_PAGE_SIZE, kReadWrite);
    card.space.map(kOut, uint64_t(kRows) * kRowBytes, kReadWrite);
    card.space.write_vector(kIn, pattern);

    // One UB row written to 65535 host rows (4 MiB, within the 16 MiB limit): a minute of
    // accesses at 1 ms each.
    const Program p{dma_in(TPU_DT_INT8, 1, kRowBytes, kIn, 0, 0, 0),
                    dma_out(TPU_DT_INT8, kRows, kRowBytes, kOut, kRowBytes, 0, 0), halt()};
    // Aborted at the DMA_OUT's 10th row.
    std::chrono::steady_clock::duration late;
    const tpu_job_result r = card.run_aborted(p, 10, true, &late);
    CHECK(r.status == TPU_ERR_ABORTED);
    CHECK(r.error_pc == 1);
    CHECK(r.fault_addr == 0);
    CHECK(r.dma_read_bytes == kRowBytes); // the DMA_IN only
    CHECK(r.dma_write_bytes == 0);
    CHECK(late < std::chrono::seconds(1));

    // Rows [0, done) were written whole, the rest not at all.
    const std::vector<uint8_t> out = card.space.read_vector<uint8_t>(kOut, kRows * kRowBytes);
    uint32_t done = 0;
    while (done < kRows && std::equal(pattern.begin(), pattern.end(), &out[done * kRowBytes]))
        done++;
    CHECK(done > 0);
    CHECK(done < kRows);
    CHECK(std::all_of(out.begin() + done * kRowBytes, out.end(), [](uint8_t b) { return b == 0; }));
}

TEST_CASE("abort stops a long DMA_IN, and what it wrote is cleared for the next job",
          "[dma][abort]") {
    const uint32_t mode = GENERATE(from_range(std::begin(kModes), std::end(kModes)));
    CAPTURE(mode);
    SlowCard card(mode);
    constexpr uint64_t kIn = 0x100000, kOut = 0x200000;
    constexpr uint32_t kRowBytes = TPU_PAGE_SIZE;
    card.space.map(kIn, kRowBytes, kReadWrite);
    card.space.map(kOut, 16 * kRowBytes, kReadWrite);
    card.space.write_vector(kIn, std::vector<uint8_t>(kRowBytes, 0x5a));

    // One host page into all 4096 rows of the 16 MiB unified buffer (the limit exactly): seconds
    // of accesses at 1 ms each.
    const Program p{dma_in(TPU_DT_INT8, 4096, kRowBytes, kIn, 0, 0, kRowBytes), halt()};
    // Aborted at the job's 100th read: the program and its page walks take a few, the
    // DMA_IN's rows the rest.
    std::chrono::steady_clock::duration late;
    tpu_job_result r = card.run_aborted(p, 100, false, &late);
    CHECK(r.status == TPU_ERR_ABORTED);
    CHECK(r.error_pc == 0);
    CHECK(r.fault_addr == 0);
    CHECK(r.dma_read_bytes == 0);
    CHECK(late < std::chrono::seconds(1));

    // The first rows had been written; the next job must not see them.
    tpu_engine_reset(card.engine.get());
    card.memory.slow = false;
    r = card.run(
        Program{dma_out(TPU_DT_INT8, 16, kRowBytes, kOut, kRowBytes, 0, kRowBytes), halt()});
    REQUIRE(r.status == TPU_ERR_NONE);
    CHECK(card.space.read_vector<uint8_t>(kOut, 16 * kRowBytes) ==
          std::vector<uint8_t>(16 * kRowBytes, 0));
}
