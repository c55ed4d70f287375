// SPDX-License-Identifier: MIT
// The test-only hold (tpu_engine_test_hold(), QEMU's x-test-hold and its TEST_HOLD register): a
// job armed for instruction pc waits before it, having run the instructions before it, until it
// is let go (then it completes) or aborted (then it ends TPU_ERR_ABORTED at once, as a long job
// would at its next boundary); one job takes the hold, the next runs through; and a held job
// holds no lock a TLB invalidation waits for. Whether the job is held is read from the engine
// (tpu_engine_test_held()), not guessed from a sleep.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <iterator>
#include <thread>

#include "rig.hpp"

using namespace tpu::test;
using namespace std::chrono_literals;

namespace {

// Polls until a job is held (its pc in *pc) or 10 s passed.
bool wait_held(tpu_engine *eng, uint32_t *pc) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!tpu_engine_test_held(eng, pc)) {
        if (std::chrono::steady_clock::now() > deadline)
            return false;
        std::this_thread::sleep_for(1ms);
    }
    return true;
}

// Copies 64 bytes in (at pc 0) and out (pc 1) twice over, then HALT (pc 4).
const uint64_t kIn = Rig::kHost, kOut1 = Rig::kHost + 0x1000, kOut2 = Rig::kHost + 0x2000;
const Program kCopies{dma_in(TPU_DT_INT8, 1, 64, kIn, 0, 0, 0),
                      dma_out(TPU_DT_INT8, 1, 64, kOut1, 0, 0, 0), nop(),
                      dma_out(TPU_DT_INT8, 1, 64, kOut2, 0, 0, 0), halt()};

} // namespace

TEST_CASE("a held job waits before its instruction until it is let go", "[hold][abort]") {
    const uint32_t mode = GENERATE(from_range(std::begin(kModes), std::end(kModes)));
    CAPTURE(mode);
    Rig rig(mode);
    tpu_engine *eng = rig.card.engine();
    rig.put<uint8_t>(0, std::vector<uint8_t>(64, 0x5a));
    uint32_t pc = 99;
    CHECK_FALSE(tpu_engine_test_held(eng, &pc));

    tpu_engine_test_hold(eng, true, 2);
    auto job = std::async(std::launch::async, [&] { return rig.run(kCopies); });
    REQUIRE(wait_held(eng, &pc));
    CHECK(pc == 2);
    // Instructions 0 and 1 ran, 3 did not: the job stays there however long it is left.
    CHECK(rig.get<uint8_t>(0x1000, 64) == std::vector<uint8_t>(64, 0x5a));
    CHECK(job.wait_for(100ms) == std::future_status::timeout);
    CHECK(rig.get<uint8_t>(0x2000, 64) == std::vector<uint8_t>(64, 0));
    REQUIRE(tpu_engine_test_held(eng, &pc));

    tpu_engine_test_release(eng); // let go
    REQUIRE(job.wait_for(10s) == std::future_status::ready);
    const tpu_job_result r = job.get();
    CHECK(r.status == TPU_ERR_NONE);
    CHECK(rig.get<uint8_t>(0x2000, 64) == std::vector<uint8_t>(64, 0x5a));
    CHECK_FALSE(tpu_engine_test_held(eng, &pc));

    // The hold was taken by that job: the next one runs through.
    CHECK(rig.run(kCopies).status == TPU_ERR_NONE);
}

TEST_CASE("a job shorter than the armed instruction leaves the hold to the next", "[hold]") {
    Rig rig(TPU_ENGINE_FAST);
    tpu_engine *eng = rig.card.engine();
    tpu_engine_test_hold(eng, true, 3);
    CHECK(rig.run(Program{nop(), halt()}).status == TPU_ERR_NONE);
    auto job = std::async(std::launch::async, [&] { return rig.run(kCopies); });
    uint32_t pc = 0;
    REQUIRE(wait_held(eng, &pc));
    CHECK(pc == 3);
    tpu_engine_test_release(eng);
    CHECK(job.get().status == TPU_ERR_NONE);
}

TEST_CASE("an abort ends a held job at once as it ends a long one", "[hold][abort]") {
    const uint32_t mode = GENERATE(from_range(std::begin(kModes), std::end(kModes)));
    CAPTURE(mode);
    Rig rig(mode);
    tpu_engine *eng = rig.card.engine();
    tpu_engine_test_hold(eng, true, 1);
    auto job = std::async(std::launch::async, [&] { return rig.run(kCopies); });
    uint32_t pc = 0;
    REQUIRE(wait_held(eng, &pc));
    const auto abort_time = std::chrono::steady_clock::now();
    tpu_engine_abort(eng);
    REQUIRE(job.wait_for(10s) == std::future_status::ready);
    CHECK(std::chrono::steady_clock::now() - abort_time < 1s);
    const tpu_job_result r = job.get();
    CHECK(r.status == TPU_ERR_ABORTED);
    CHECK(r.error_pc == 1);
    CHECK(rig.get<uint8_t>(0x1000, 64) == std::vector<uint8_t>(64, 0)); // pc 1 never ran
    CHECK_FALSE(tpu_engine_test_held(eng, &pc));

    // An abort not yet cleared by a reset keeps an armed hold from holding; after the reset the
    // card runs (and holds) again.
    tpu_engine_test_hold(eng, true, 0);
    CHECK(rig.run(kCopies).status == TPU_ERR_ABORTED);
    tpu_engine_reset(eng);
    auto next = std::async(std::launch::async, [&] { return rig.run(kCopies); });
    REQUIRE(wait_held(eng, &pc));
    CHECK(pc == 0);
    tpu_engine_test_release(eng);
    CHECK(next.get().status == TPU_ERR_NONE);
}

TEST_CASE("a held job holds up no TLB invalidation", "[hold][tlb]") {
    Rig rig(TPU_ENGINE_FAST);
    tpu_engine *eng = rig.card.engine();
    tpu_engine_test_hold(eng, true, 2); // after a DMA in and out: translations in the TLB
    auto job = std::async(std::launch::async, [&] { return rig.run(kCopies); });
    uint32_t pc = 0;
    REQUIRE(wait_held(eng, &pc));
    auto invalidation =
        std::async(std::launch::async, [&] { tpu_engine_tlb_invalidate(eng, TPU_TLB_INVAL_ALL); });
    CHECK(invalidation.wait_for(10s) == std::future_status::ready);
    CHECK(tpu_engine_test_held(eng, &pc));
    tpu_engine_test_release(eng);
    CHECK(job.get().status == TPU_ERR_NONE);
}

TEST_CASE("the hold armed again while a job is held takes the next job", "[hold]") {
    Rig rig(TPU_ENGINE_FAST);
    tpu_engine *eng = rig.card.engine();
    tpu_engine_test_hold(eng, true, 1);
    auto first = std::async(std::launch::async, [&] { return rig.run(kCopies); });
    uint32_t pc = 0;
    REQUIRE(wait_held(eng, &pc));
    CHECK(pc == 1);
    tpu_engine_test_hold(eng, true, 3); // the first job stays held
    CHECK(first.wait_for(100ms) == std::future_status::timeout);
    tpu_engine_test_release(eng);
    // Held once, it runs through instruction 3: the hold is left to the next job.
    REQUIRE(first.wait_for(10s) == std::future_status::ready);
    CHECK(first.get().status == TPU_ERR_NONE);
    auto second = std::async(std::launch::async, [&] { return rig.run(kCopies); });
    REQUIRE(wait_held(eng, &pc));
    CHECK(pc == 3);
    tpu_engine_test_hold(eng, false, 0); // disarmed: the held job stays held
    CHECK(second.wait_for(100ms) == std::future_status::timeout);
    tpu_engine_test_release(eng);
    CHECK(second.get().status == TPU_ERR_NONE);
    CHECK(rig.run(kCopies).status == TPU_ERR_NONE); // not held
}
