// SPDX-License-Identifier: MIT
// test_executables.cpp - guest test: compiled executables and the pools on the real card. An
// op's shape is compiled once (the device's cache counts compilations) and its executable,
// launched on other buffers, gives exactly the reference results; after a first call, repeated
// launches create no buffer objects (the program and staging pools make none); launches with
// buffers that are too small or released are refused before anything reaches the card. Prints
// the time per launch of a cached small matmul (each launch a job on the card, the result exact).
#include <tpurt/codegen/op_executables.hpp>
#include <tpurt/codegen/program_builder.hpp>
#include <tpurt/golden/reference.hpp>
#include <tpurt/golden/reference_fp32.hpp>
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/tpurt.hpp>

#include <drm/tpu_accel.h>

#include "runtime_helpers.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <sys/ioctl.h>
#include <vector>

namespace {

using tpurt::DType;

using guest_test::device;

using guest_test::require_refused;

} // namespace

TEST_CASE("an op's shape compiles once and runs on any buffers", "[executable]") {
    tpurt::Device &dev = device();
    const std::uint32_t m = 150, k = 260, n = 130;
    const std::uint64_t before = dev.runtime_stats().compilations;
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        const auto a = tpurt::random_bf16(std::size_t{m} * k, seed);
        const auto b = tpurt::random_bf16(std::size_t{k} * n, seed + 10);
        // Fresh buffers each time, so the executable is patched for new addresses.
        const tpurt::Buffer a_buf = dev.allocate_copy(a.data(), a.size() * 2);
        const tpurt::Buffer b_buf = dev.allocate_copy(b.data(), b.size() * 2);
        tpurt::Buffer c_buf = dev.allocate(std::size_t{m} * n * 4);
        tpurt::matmul(dev, a_buf, b_buf, c_buf, m, k, n, DType::Bf16);
        std::vector<float> ref(std::size_t{m} * n);
        tpurt::reference_matmul(a, b, ref, m, k, n);
        CHECK(std::memcmp(c_buf.data(), ref.data(), ref.size() * 4) == 0);
    }
    CHECK(dev.runtime_stats().compilations == before + 1);
    // Another shape, and the host-array form of the same shape (one more compile only for the
    // new shape).
    std::vector<std::int32_t> c(6 * 5);
    tpurt::matmul(dev, tpurt::random_int8(6 * 7, 1), tpurt::random_int8(7 * 5, 2), c, 6, 7, 5);
    CHECK(dev.runtime_stats().compilations == before + 2);
    CHECK(dev.runtime_stats().executables_cached >= 2);
}

TEST_CASE("repeated launches create no buffer objects", "[executable][pools]") {
    tpurt::Device &dev = device();
    const auto a = tpurt::random_fp32(64 * 96, 5);
    const auto b = tpurt::random_fp32(96 * 80, 6);
    std::vector<float> c(64 * 80), ref(c.size());
    tpurt::reference_matmul(a, b, ref, 64, 96, 80);
    tpurt::matmul(dev, a, b, c, 64, 96, 80); // warm: compiles, fills the pools
    const tpurt::RuntimeStats warm = dev.runtime_stats();
    for (int i = 0; i < 20; ++i) {
        std::fill(c.begin(), c.end(), -1.0f);
        tpurt::matmul(dev, a, b, c, 64, 96, 80);
        REQUIRE(std::memcmp(c.data(), ref.data(), ref.size() * 4) == 0);
    }
    const tpurt::RuntimeStats after = dev.runtime_stats();
    CHECK(after.program_buffers_created == warm.program_buffers_created);
    CHECK(after.staging_buffers_created == warm.staging_buffers_created);
    CHECK(after.staging_bytes_cached == warm.staging_bytes_cached);
    CHECK(after.compilations == warm.compilations);
}

TEST_CASE("launch time of a cached 128^3 matmul on device buffers", "[executable][speed]") {
    tpurt::Device &dev = device();
    const auto a = tpurt::random_bf16(128 * 128, 7);
    const tpurt::Buffer a_buf = dev.allocate_copy(a.data(), a.size() * 2);
    const tpurt::Buffer b_buf = dev.allocate_copy(a.data(), a.size() * 2);
    tpurt::Buffer c_buf = dev.allocate(128 * 128 * 4);
    tpurt::matmul(dev, a_buf, b_buf, c_buf, 128, 128, 128, DType::Bf16);
    const int launches = 100;
    const std::uint64_t compilations = dev.runtime_stats().compilations;
    const std::uint64_t jobs = dev.counters().jobs_done;
    std::memset(c_buf.data(), 0xff, 128 * 128 * 4);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < launches; ++i)
        tpurt::matmul(dev, a_buf, b_buf, c_buf, 128, 128, 128, DType::Bf16);
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
            .count() /
        launches;
    std::printf("cached bf16 128^3 matmul on device buffers: %.0f us per blocking launch\n", us);
    // What was timed: every launch reached the card as a job, from the cache, and the result
    // is the reference's; a launch under TCG on a loaded host takes milliseconds, not a second.
    CHECK(dev.counters().jobs_done - jobs >= std::uint64_t{launches});
    CHECK(dev.runtime_stats().compilations == compilations);
    std::vector<float> ref(128 * 128);
    tpurt::reference_matmul(a, a, ref, 128, 128, 128);
    CHECK(std::memcmp(c_buf.data(), ref.data(), ref.size() * 4) == 0);
    CHECK(us < 1e6);
}

TEST_CASE("an empty program submitted and waited, from the program pool", "[executable][speed]") {
    tpurt::Device &dev = device();
    const tpurt::Program empty = tpurt::ProgramBuilder().halt().finish();
    dev.submit(empty, {}).wait();
    const std::uint64_t created = dev.runtime_stats().program_buffers_created;
    // The same through a buffer object made for the program each time (the runtime before its
    // pools), alternating with the pooled path so both see the same load.
    const auto fresh_buffer = [&] {
        const tpurt::Buffer code = dev.allocate_copy(empty.insns.data(), empty.size_bytes());
        struct drm_tpu_submit submit = {};
        submit.program_handle = code.handle();
        submit.program_size = static_cast<std::uint32_t>(empty.size_bytes());
        REQUIRE(ioctl(dev.fd(), DRM_IOCTL_TPU_SUBMIT, &submit) == 0);
        struct drm_tpu_wait wait = {};
        wait.job_id = submit.job_id;
        wait.timeout_ns = 10'000'000'000;
        REQUIRE(ioctl(dev.fd(), DRM_IOCTL_TPU_WAIT, &wait) == 0);
    };
    std::vector<double> pooled, fresh;
    const auto time = [](std::vector<double> &into, auto &&call) {
        const auto start = std::chrono::steady_clock::now();
        call();
        into.push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                .count());
    };
    for (int i = 0; i < 200; ++i) {
        time(pooled, [&] { dev.submit(empty, {}).wait(); });
        time(fresh, fresh_buffer);
    }
    std::sort(pooled.begin(), pooled.end());
    std::sort(fresh.begin(), fresh.end());
    std::printf("empty program submit + wait, p50 / p99 of 200: pooled program buffer %.0f / %.0f "
                "us, a new buffer object each time %.0f / %.0f us\n",
                pooled[100], pooled[198], fresh[100], fresh[198]);
    CHECK(dev.runtime_stats().program_buffers_created == created);
}

TEST_CASE("2048^3 matmuls: first call, cached calls, device buffers", "[executable][speed]") {
    tpurt::Device &dev = device();
    const std::uint32_t n = 2048;
    const auto a = tpurt::random_bf16(std::size_t{n} * n, 11);
    std::vector<float> c(std::size_t{n} * n);
    const auto ms = [](auto from) {
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - from)
            .count();
    };
    const std::uint64_t compiled = dev.runtime_stats().compilations;
    auto start = std::chrono::steady_clock::now();
    const tpurt::MatmulStats first = tpurt::matmul(dev, a, a, c, n, n, n);
    const double first_ms = ms(start);
    start = std::chrono::steady_clock::now();
    tpurt::matmul(dev, a, a, c, n, n, n);
    const double cached_ms = ms(start);
    const tpurt::Buffer a_buf = dev.allocate_copy(a.data(), a.size() * 2);
    tpurt::Buffer c_buf = dev.allocate(c.size() * 4);
    start = std::chrono::steady_clock::now();
    const tpurt::MatmulStats on_device =
        tpurt::matmul(dev, a_buf, a_buf, c_buf, n, n, n, DType::Bf16);
    const double device_ms = ms(start);
    CHECK(dev.runtime_stats().compilations == compiled + 1);
    CHECK(std::memcmp(c.data(), c_buf.data(), c.size() * 4) == 0);
    std::printf(
        "bf16 2048^3: host arrays first call %.1f ms (compiles), cached %.1f ms, device "
        "buffers %.1f ms; %zu jobs, card %.2f ms modelled\n",
        first_ms, cached_ms, device_ms, first.jobs,
        std::chrono::duration<double, std::milli>(on_device.modelled_time(dev.info())).count());
}

TEST_CASE("launches on unusable buffers are refused", "[executable][errors]") {
    tpurt::Device &dev = device();
    const tpurt::Buffer a = dev.allocate(64 * 64);
    const tpurt::Buffer b = dev.allocate(64 * 64);
    tpurt::Buffer c = dev.allocate(64 * 64 * 4);
    tpurt::Buffer gone = dev.allocate(64 * 64);
    tpurt::Buffer taker = std::move(gone);
    require_refused([&] { tpurt::matmul(dev, gone, b, c, 64, 64, 64, DType::Int8); }, "holds 0");
    // A direct launch whose argument lies outside the buffers it names.
    const auto exe = tpurt::cached_executable(
        dev, tpurt::MatmulProblem{.type = DType::Int8, .m = 64, .k = 64, .n = 64});
    const std::array<std::uint64_t, 3> bases{a.device_addr(), b.device_addr(),
                                             c.device_addr() + 4096};
    const std::array<const tpurt::Buffer *, 3> buffers{&a, &b, &c};
    require_refused([&] { exe->run(dev, bases, buffers); }, "does not lie inside");
    const std::array<const tpurt::Buffer *, 3> released{&a, &gone, &c};
    require_refused([&] { dev.submit(tpurt::ProgramBuilder().halt().finish(), released); },
                    "moved from or released");
}
