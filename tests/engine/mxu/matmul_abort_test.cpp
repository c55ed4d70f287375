// SPDX-License-Identifier: MIT
// An abort request stops a long MATMUL part-way in both engine modes: the fast kernels check
// between blocks of rows, the cycle-accurate array every few hundred simulated cycles. The
// MATMULs below (accumulator rows overlapping, so one pass per row) would take the simulated
// array the better part of an hour each, and the fast kernels a good fraction of a second each;
// the abort is sent once the first MATMUL has started (AbortWhenRunning), not after a sleep.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <iterator>

#include "abort_when_running.hpp"
#include "rig.hpp"

using namespace tpu::test;

TEST_CASE("abort from another thread stops a long MATMUL", "[mxu][abort]") {
    const uint32_t mode = GENERATE(from_range(std::begin(kModes), std::end(kModes)));
    CAPTURE(mode);
    HostMemory mem(64ull << 20);
    tpu_engine_config cfg = Card::default_config(); // 128 x 128 array
    cfg.threads = 1;
    cfg.mode = mode;
    Card card(mem, cfg);
    AddressSpace space = card.address_space(0);

    // 65535 rows of activations all read from UB row 0 and all accumulating into ACC row 0.
    Program p{load_w(TPU_DT_FP32, 128, 128, 0, 512)};
    for (int i = 0; i < 64; i++)
        p.push_back(matmul(TPU_DT_FP32, 65535, 128, 0, 0, 0, 0, TPU_F_ACCUMULATE));
    p.push_back(halt());
    // Aborted once the LOAD_W is done and the first MATMUL has started.
    AbortWhenRunning aborter(card.engine(), 2);
    const tpu_job_result r = card.run(space, p);
    const auto end = std::chrono::steady_clock::now();
    aborter.job_ended();
    REQUIRE(aborter.aborted());
    REQUIRE(r.status == TPU_ERR_ABORTED);
    CHECK(r.error_pc >= 1);
    CHECK(r.macs < 64ull * 65535 * 128 * 128); // part-way
    CHECK(end - aborter.abort_time() < std::chrono::seconds(1));

    // The card is usable again after a reset.
    tpu_engine_reset(card.engine());
    CHECK(card.run(space, Program{nop(), halt()}).status == TPU_ERR_NONE);
}
