// SPDX-License-Identifier: MIT
// error_test.cpp - which errors tpurt::is_retryable() calls the card's loss of the work (a hang,
// a reset, a banned file), against the uapi's and the spec's status codes, and which it does not.
#include <tpurt/error.hpp>

#include <drm/tpu_accel.h>
#include <tpu_hw.h>

#include <catch2/catch.hpp>

#include <cerrno>
#include <stdexcept>

TEST_CASE("is_retryable: hung, reset and banned work, and nothing else", "[error]") {
    auto job = [](std::uint32_t status) { return tpurt::JobError(7, status, 0, 0, "matmul"); };
    CHECK(tpurt::is_retryable(job(DRM_TPU_JOB_TIMEOUT)));
    CHECK(tpurt::is_retryable(job(DRM_TPU_JOB_CANCELED)));
    CHECK(tpurt::is_retryable(job(TPU_ERR_ABORTED)));
    CHECK(tpurt::is_retryable(tpurt::Error(tpurt::ErrorCode::SystemCall, "submit", ECANCELED)));

    CHECK_FALSE(tpurt::is_retryable(job(TPU_ERR_MMU_FAULT)));
    CHECK_FALSE(tpurt::is_retryable(job(TPU_ERR_BAD_OPCODE)));
    CHECK_FALSE(tpurt::is_retryable(tpurt::Error(tpurt::ErrorCode::SystemCall, "submit", EINVAL)));
    CHECK_FALSE(tpurt::is_retryable(tpurt::Error(tpurt::ErrorCode::Timeout, "wait")));
    CHECK_FALSE(tpurt::is_retryable(tpurt::Error(tpurt::ErrorCode::NoDevice, "open")));
    CHECK_FALSE(tpurt::is_retryable(std::runtime_error("other")));
}
