// SPDX-License-Identifier: MIT
// test_reset.cpp - guest test of resets that spare the innocent (the VM loads tpu.ko with
// job_timeout_ms=1000 for this binary, on a card whose test-only hold keeps a job from ending:
// x-test-hold, guest::kHangAt): a job that hangs ends with
// DRM_TPU_JOB_TIMEOUT while the jobs behind it in the ring, of its own file and of others, run
// again after the reset and complete correctly; a file whose jobs keep hanging is banned (its
// queued jobs end DRM_TPU_JOB_CANCELED, SUBMIT fails with ECANCELED) while other files go on; a
// job found hung that ends before its reset is no hang, and the job after it is not run twice.
#include "guest_programs.hpp"
#include "tenant.hpp"
#include "uapi_helpers.hpp"

#include <catch2/catch.hpp>

#include <tpurt/codegen/program_builder.hpp>
#include <tpurt/tpurt.hpp>

#include <xf86drm.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using fences::FencedJob;
using tenants::status_of;
using tenants::Tenant;

using guest::kHangAt;
using guest::kHangMatmuls;

TEST_CASE("innocent jobs caught by a reset run again and complete correctly", "[reset]") {
    Tenant guilty(0x11), other(0x22);
    uapi::CardHold hold(kHangAt);
    auto hung = guilty.busy(kHangMatmuls);
    // Behind the hung job in the ring: a job of its own file and three of another file.
    auto own = guilty.copy();
    std::vector<std::unique_ptr<FencedJob>> others;
    for (int i = 0; i < 3; i++)
        others.push_back(other.copy());

    CHECK(status_of(*hung) == DRM_TPU_JOB_TIMEOUT);
    CHECK(status_of(*own) == TPU_ERR_NONE);
    CHECK(guilty.copied());
    for (const auto &job : others)
        CHECK(status_of(*job) == TPU_ERR_NONE);
    CHECK(other.copied());
}

TEST_CASE("a file whose jobs keep hanging is banned, other files go on", "[reset][ban]") {
    using namespace std::chrono_literals;
    Tenant guilty(0x33), other(0x44);
    uapi::CardHold hold(kHangAt);
    std::vector<std::unique_ptr<FencedJob>> hangs;
    for (int i = 0; i < 3; i++)
        hangs.push_back(guilty.busy(kHangMatmuls));
    auto queued = guilty.copy();
    auto innocent = other.copy();

    // Each hung job in turn is held; while it is, the hold is armed again for the next one (the
    // timeout comes a second after the job started).
    std::uint64_t held_seqno = 0;
    for (std::size_t i = 0; i < hangs.size(); i++) {
        INFO("hung job " << i);
        REQUIRE(hold.wait_next_held(&held_seqno));
        if (i + 1 < hangs.size())
            hold.arm(kHangAt);
        CHECK(status_of(*hangs[i]) == DRM_TPU_JOB_TIMEOUT);
    }
    // The third hang bans the file: its job behind them does not run.
    CHECK(status_of(*queued) == DRM_TPU_JOB_CANCELED);
    CHECK_FALSE(guilty.copied());
    try {
        guilty.copy();
        FAIL("SUBMIT of a banned file succeeded");
    } catch (const std::exception &error) {
        CHECK(std::string(error.what()).find(std::strerror(ECANCELED)) != std::string::npos);
    }
    CHECK(status_of(*innocent) == TPU_ERR_NONE);
    CHECK(other.copied());

    // A new file of the same process is not banned.
    Tenant fresh(0x55);
    CHECK(status_of(*fresh.copy()) == TPU_ERR_NONE);
    CHECK(fresh.copied());
}

// Item 12 of issue 24: a job the timeout handler found hung that ended before the queue reset (here
// held between the two by the debugfs hook hang_hold until the card retired it) was still counted
// as a hang, and the job after it, which the card had started by then and the reset dropped, was
// written into the ring again and run a second time. That job moves rows of a buffer in place
// (row 1 <- row 0, row 0 <- row 2) before its long part: run twice, row 1 ends up with row 2's
// bytes. It must end DRM_TPU_JOB_CANCELED, run once, and the file must not be banned after three
// such rounds. The card holds the slow job (kHangAt) until the handler holds, then, let go, it
// ends; the card holds the next job after its moves (kNextAt) until the reset aborts it.
TEST_CASE("a hung job that ends before its reset is no hang; the job after it is not run twice",
          "[reset][late]") {
    using namespace std::chrono_literals;
    const std::string hold = uapi::debugfs_dir() + "/hang_hold";
    const auto hold_state = [&] {
        std::ifstream in(hold);
        std::string line;
        std::getline(in, line);
        return line;
    };
    REQUIRE(hold_state() == "0");
    tpurt::Device device = tpurt::Device::open(0);
    tpurt::Buffer rows = device.allocate(TPU_PAGE_SIZE);
    auto *bytes = static_cast<std::uint8_t *>(rows.data());
    constexpr std::uint32_t ub = 4u << 20; // above what the busy MATMULs use
    tpurt::ProgramBuilder builder;
    builder.dma_in(guest::int8_rows(rows.device_addr(), ub, 1, 64))
        .dma_out(guest::int8_rows(rows.device_addr() + 64, ub, 1, 64))
        .dma_in(guest::int8_rows(rows.device_addr() + 128, ub + 64, 1, 64))
        .dma_out(guest::int8_rows(rows.device_addr(), ub + 64, 1, 64))
        .load_weights(guest::packed_weights(tpurt::DType::Int8, 128, 128));
    for (unsigned i = 0; i < 4; i++)
        builder.matmul(guest::packed_matmul(tpurt::DType::Int8, 8192, 128, 128));
    const tpurt::Program rotate = builder.halt().finish();
    // The next job is held before its second MATMUL, past the moves and past the end of the slow
    // job's program (its HALT is instruction kHangMatmuls + 1), which so never takes this hold.
    constexpr unsigned kNextAt = 6;
    static_assert(kNextAt > kHangMatmuls + 1);

    // Three times: were each counted as a hang, the file would be banned (TPU_CTX_BAN_HANGS).
    for (int round = 0; round < 3; round++) {
        INFO("round " << round);
        for (unsigned row = 0; row < 3; row++)
            std::memset(bytes + 64 * row, 0x10 + row, 64);
        {
            std::ofstream arm(hold);
            arm << "1";
        }
        uapi::CardHold card_hold(kHangAt);
        FencedJob slow(device, guest::busy_program(kHangMatmuls), {});
        FencedJob next(device, rotate, {&rows});
        // The handler finds `slow` hung after 1 s and holds until the card has retired it.
        REQUIRE(card_hold.wait_held());
        REQUIRE(uapi::wait_for([&] { return hold_state() == "2"; }, 60s));
        // Let go, `slow` ends; the card starts `next` and holds it after its moves.
        card_hold.arm(kNextAt);
        card_hold.release();
        struct drm_tpu_wait result = {};
        REQUIRE(fences::fence_status(slow.sync_file()) == 1);
        REQUIRE(slow.wait(result) == 0);
        CHECK(result.status == TPU_ERR_NONE);
        CHECK(status_of(next) == DRM_TPU_JOB_CANCELED);
        CHECK(bytes[64] == 0x10);  // row 1 has row 0's bytes once: not row 2's
        CHECK(bytes[0] == 0x12);   // row 0 has row 2's bytes
        CHECK(bytes[128] == 0x12); // row 2 as it was
    }
    // Not banned: the file's jobs still run.
    FencedJob after(device, guest::halt_program(), {});
    CHECK(status_of(after) == TPU_ERR_NONE);
    CHECK(hold_state() == "0");
}
