// SPDX-License-Identifier: MIT
// test_fences.cpp - guest test of what a job's fence says, read through a sync_file exported
// from its out-syncobj (what syncobj and dma_resv waiters see): success, the card's error
// (-EIO), -ETIMEDOUT for a job ended by the driver's timeout (the VM loads tpu.ko with
// job_timeout_ms=1000 for this binary, on a card whose test-only hold keeps a job from ending:
// x-test-hold), and for every job the same outcome as DRM_IOCTL_TPU_WAIT reports.
#include "fence_helpers.hpp"
#include "guest_programs.hpp"
#include "uapi_helpers.hpp"

#include <catch2/catch.hpp>

#include <tpurt/codegen/program_builder.hpp>
#include <tpurt/tpurt.hpp>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

using fences::fence_status;
using fences::FencedJob;

namespace {

constexpr std::uint32_t kBytes = 256;

tpurt::Program copy_program(const tpurt::Buffer &src, const tpurt::Buffer &dst) {
    return tpurt::ProgramBuilder()
        .dma_in(guest::int8_rows(src.device_addr(), 0, 1, kBytes))
        .dma_out(guest::int8_rows(dst.device_addr(), 0, 1, kBytes))
        .halt()
        .finish();
}

// WAIT's status of `job`, checked against the status its fence carries.
std::uint32_t wait_and_compare(const FencedJob &job) {
    struct drm_tpu_wait r;
    REQUIRE(job.wait(r) == 0);
    INFO("job " << job.id() << ": WAIT status " << r.status);
    CHECK(fence_status(job.sync_file()) == fences::expected_fence_status(r.status));
    return r.status;
}

} // namespace

TEST_CASE("a job's fence carries success or the card's error", "[fences]") {
    tpurt::Device device = tpurt::Device::open(0);
    tpurt::Buffer src = device.allocate(TPU_PAGE_SIZE), dst = device.allocate(TPU_PAGE_SIZE);
    std::memset(src.data(), 0x3c, kBytes);

    FencedJob good(device, copy_program(src, dst), {&src, &dst});
    CHECK(fence_status(good.sync_file()) == 1);
    CHECK(wait_and_compare(good) == TPU_ERR_NONE);
    CHECK(static_cast<const std::uint8_t *>(dst.data())[kBytes - 1] == 0x3c);

    const tpurt::Program fault =
        tpurt::ProgramBuilder().dma_in(guest::int8_rows(uapi::unmapped_va(), 0, 1, 64)).finish();
    FencedJob bad(device, fault, {});
    CHECK(fence_status(bad.sync_file()) == -EIO);
    CHECK(wait_and_compare(bad) == TPU_ERR_MMU_FAULT);
}

TEST_CASE("a timed-out job's fence says -ETIMEDOUT and every fence agrees with WAIT",
          "[fences][timeout]") {
    tpurt::Device device = tpurt::Device::open(0);
    tpurt::Buffer src = device.allocate(TPU_PAGE_SIZE), dst = device.allocate(TPU_PAGE_SIZE);
    std::memset(src.data(), 0x2b, kBytes);

    // Held by the card after its LOAD_W, before its first MATMUL (debugfs card_hold): a job
    // that never ends on any host, however fast, until the module's 1000 ms timeout resets its
    // queue, which aborts it. Two MATMULs would take the card well under a millisecond.
    uapi::CardHold hold(1);
    FencedJob hung(device, guest::busy_program(2), {});
    std::vector<std::unique_ptr<FencedJob>> behind;
    for (int i = 0; i < 3; i++)
        behind.push_back(std::make_unique<FencedJob>(
            device, copy_program(src, dst), std::vector<const tpurt::Buffer *>{&src, &dst}));

    CHECK(fence_status(hung.sync_file()) == -ETIMEDOUT);
    CHECK(wait_and_compare(hung) == DRM_TPU_JOB_TIMEOUT);
    for (const auto &job : behind)
        wait_and_compare(*job);

    // The card works for this file afterwards, fence and all.
    std::memset(dst.data(), 0, kBytes);
    FencedJob after(device, copy_program(src, dst), {&src, &dst});
    CHECK(wait_and_compare(after) == TPU_ERR_NONE);
    CHECK(static_cast<const std::uint8_t *>(dst.data())[0] == 0x2b);
}
