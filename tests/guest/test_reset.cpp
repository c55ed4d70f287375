// SPDX-License-Identifier: MIT
// test_reset.cpp - guest test of resets that spare the innocent (the VM loads tpu.ko with
// job_timeout_ms=1000 and one engine thread for this binary): a job that hangs ends with
// DRM_TPU_JOB_TIMEOUT while the jobs behind it in the ring, of its own file and of others, run
// again after the reset and complete correctly; a file whose jobs keep hanging is banned (its
// queued jobs end DRM_TPU_JOB_CANCELED, SUBMIT fails with ECANCELED) while other files go on.
#include "fence_helpers.hpp"
#include "guest_programs.hpp"

#include <catch2/catch.hpp>

#include <tpurt/tpurt.hpp>

#include <xf86drm.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

using fences::FencedJob;

namespace {

constexpr std::uint32_t kBytes = 256;
// About 2.7 T MACs: many seconds of work, ended after the module's 1000 ms.
constexpr unsigned kHangMatmuls = 20000;

// A file with a source buffer holding `value` and a destination buffer.
struct Tenant {
    explicit Tenant(std::uint8_t value)
        : device(tpurt::Device::open(0)), src(device.allocate(TPU_PAGE_SIZE)),
          dst(device.allocate(TPU_PAGE_SIZE)), value(value) {
        std::memset(src.data(), value, kBytes);
    }
    // A job copying src to dst through the unified buffer.
    std::unique_ptr<FencedJob> copy() {
        return std::make_unique<FencedJob>(
            device,
            tpurt::ProgramBuilder()
                .dma_in(guest::int8_rows(src.device_addr(), 0, 1, kBytes))
                .dma_out(guest::int8_rows(dst.device_addr(), 0, 1, kBytes))
                .halt()
                .finish(),
            std::vector<const tpurt::Buffer *>{&src, &dst});
    }
    std::unique_ptr<FencedJob> hang() {
        return std::make_unique<FencedJob>(device, guest::busy_program(kHangMatmuls),
                                           std::vector<const tpurt::Buffer *>{});
    }
    bool copied() const {
        const auto *out = static_cast<const std::uint8_t *>(dst.data());
        return out[0] == value && out[kBytes - 1] == value;
    }

    tpurt::Device device;
    tpurt::Buffer src, dst;
    std::uint8_t value;
};

// WAIT's status of `job`, checked against its fence.
std::uint32_t status_of(const FencedJob &job) {
    struct drm_tpu_wait r;
    REQUIRE(job.wait(r) == 0);
    INFO("job " << job.id() << ": WAIT status " << r.status);
    CHECK(fences::fence_status(job.sync_file()) == fences::expected_fence_status(r.status));
    return r.status;
}

} // namespace

TEST_CASE("innocent jobs caught by a reset run again and complete correctly", "[reset]") {
    Tenant guilty(0x11), other(0x22);
    auto hung = guilty.hang();
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
    Tenant guilty(0x33), other(0x44);
    std::vector<std::unique_ptr<FencedJob>> hangs;
    for (int i = 0; i < 3; i++)
        hangs.push_back(guilty.hang());
    auto queued = guilty.copy();
    auto innocent = other.copy();

    for (const auto &job : hangs)
        CHECK(status_of(*job) == DRM_TPU_JOB_TIMEOUT);
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
