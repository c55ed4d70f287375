// SPDX-License-Identifier: MIT
// test_reset.cpp - guest test of resets that spare the innocent (the VM loads tpu.ko with
// job_timeout_ms=1000 and one engine thread for this binary): a job that hangs ends with
// DRM_TPU_JOB_TIMEOUT while the jobs behind it in the ring, of its own file and of others, run
// again after the reset and complete correctly; a file whose jobs keep hanging is banned (its
// queued jobs end DRM_TPU_JOB_CANCELED, SUBMIT fails with ECANCELED) while other files go on.
#include "tenant.hpp"

#include <catch2/catch.hpp>

#include <tpurt/tpurt.hpp>

#include <xf86drm.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

using fences::FencedJob;
using tenants::status_of;
using tenants::Tenant;

// About 2.7 T MACs: many seconds of work, ended after the module's 1000 ms.
constexpr unsigned kHangMatmuls = 20000;

TEST_CASE("innocent jobs caught by a reset run again and complete correctly", "[reset]") {
    Tenant guilty(0x11), other(0x22);
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
    Tenant guilty(0x33), other(0x44);
    std::vector<std::unique_ptr<FencedJob>> hangs;
    for (int i = 0; i < 3; i++)
        hangs.push_back(guilty.busy(kHangMatmuls));
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
