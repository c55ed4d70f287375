// SPDX-License-Identifier: MIT
// engine_backend_test.cpp - the in-process card's backend below the Device (runtime/src/
// backend/engine_backend.hpp) where the runtime cannot reach on its own: a job waiting for a
// timeline point starts only once another thread signals it, points imported from another
// timeline, timeline waits that time out, the driver's refusals of a submission, and a
// released buffer's pages gone from the card (a later job touching them faults).
#include "backend/engine_backend.hpp"

#include <tpurt/codegen/program_builder.hpp>
#include <tpurt/error.hpp>

#include <catch2/catch.hpp>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <latch>
#include <thread>

namespace {

using tpurt::detail::BackendBuffer;
using tpurt::detail::EngineBackend;
using tpurt::detail::JobRecord;
using tpurt::detail::SubmitRequest;
using tpurt::detail::TimelinePoint;

std::int64_t now_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// Writes `program` into a new buffer of the backend.
BackendBuffer program_buffer(EngineBackend &backend, const tpurt::Program &program) {
    const BackendBuffer buffer = backend.create_buffer(program.size_bytes(), -1);
    std::memcpy(buffer.map, program.insns.data(), program.size_bytes());
    return buffer;
}

// A job copying 64 bytes from `from` to `to`.
tpurt::Program copy64(std::uint64_t from, std::uint64_t to) {
    tpurt::DmaTransfer in{.type = tpurt::DType::Int8,
                          .host_addr = from,
                          .host_stride = 64,
                          .local_addr = 0,
                          .local_stride = 64,
                          .rows = 1,
                          .cols = 64};
    tpurt::DmaTransfer out = in;
    out.host_addr = to;
    return tpurt::ProgramBuilder().dma_in(in).dma_out(out).halt().finish();
}

} // namespace

TEST_CASE("in-process backend: a job waits for its point, then signals its own",
          "[in-process][backend]") {
    EngineBackend backend({});
    const BackendBuffer data = backend.create_buffer(4096, -1);
    std::memset(data.map, 0x5a, 64);
    const BackendBuffer program =
        program_buffer(backend, copy64(data.device_addr, data.device_addr + 64));
    const std::uint32_t t = backend.create_timeline();
    const TimelinePoint in{t, 1}, out{t, 2};
    SubmitRequest request;
    request.program = program.handle;
    request.program_bytes = 96;
    request.buffers = std::span<const std::uint32_t>(&data.handle, 1);
    request.wait = &in;
    request.signal = &out;

    // The job waits for point 1 (the submitting thread blocks until it has signalled), so its
    // copy cannot have happened when this thread signals it.
    std::uint64_t job = 0;
    int submitted = -1;
    std::latch submitting(1);
    std::thread submitter([&] {
        submitting.count_down();
        submitted = backend.submit(request, job);
    });
    submitting.wait();
    CHECK(static_cast<unsigned char *>(data.map)[64] == 0);
    CHECK(backend.timeline_value(t) == 0);
    backend.signal_timeline(t, 1);
    submitter.join();
    REQUIRE(submitted == 0);
    CHECK(backend.timeline_value(t) == 2);
    CHECK(static_cast<unsigned char *>(data.map)[64] == 0x5a);
    JobRecord record;
    REQUIRE(backend.wait(job, 0, false, record) == 0);
    CHECK(record.status == TPU_ERR_NONE);
    CHECK(record.cycles > 0);
    CHECK(backend.wait(job, 0, false, record) == ENOENT); // collected once

    backend.destroy_timeline(t);
    backend.release_buffer(program);
    backend.release_buffer(data);
}

TEST_CASE("in-process backend: imported points, timeouts, order of points",
          "[in-process][backend]") {
    EngineBackend backend({});
    const std::uint32_t a = backend.create_timeline(), b = backend.create_timeline();
    backend.import_point(b, 1, {a, 2});
    CHECK_FALSE(backend.wait_timeline(b, 1, now_ns() + 1'000'000));
    backend.signal_timeline(a, 2); // point 1 of a has not signalled: neither has 2
    CHECK(backend.timeline_value(a) == 0);
    CHECK_FALSE(backend.wait_timeline(b, 1, now_ns()));
    backend.signal_timeline(a, 1);
    CHECK(backend.timeline_value(a) == 2);
    CHECK(backend.wait_timeline(b, 1, now_ns()));
    CHECK(backend.timeline_value(b) == 1);
    backend.destroy_timeline(b);
    CHECK_THROWS_AS(backend.timeline_value(b), tpurt::Error);
    backend.destroy_timeline(a);
}

TEST_CASE("in-process backend: submissions the driver refuses", "[in-process][backend]") {
    EngineBackend backend({});
    const BackendBuffer program = program_buffer(backend, tpurt::ProgramBuilder().halt().finish());
    SubmitRequest request;
    request.program = program.handle;
    request.program_bytes = 32;
    std::uint64_t job = 0;
    request.program = 999;
    CHECK(backend.submit(request, job) == ENOENT);
    request.program = program.handle;
    request.program_bytes = 33;
    CHECK(backend.submit(request, job) == EINVAL);
    request.program_bytes = 8192;
    CHECK(backend.submit(request, job) == EINVAL);
    request.program_bytes = 32;
    const std::uint32_t missing = 12345;
    request.buffers = std::span<const std::uint32_t>(&missing, 1);
    CHECK(backend.submit(request, job) == ENOENT);
    request.buffers = {};
    request.priority = 4;
    CHECK(backend.submit(request, job) == EINVAL);
    request.priority = 0;
    CHECK(backend.submit(request, job) == 0);
    backend.release_buffer(program);
}

TEST_CASE("in-process backend: a released buffer is gone from the card",
          "[in-process][backend][faults]") {
    EngineBackend backend({});
    const BackendBuffer data = backend.create_buffer(4096, -1);
    const BackendBuffer gone = backend.create_buffer(4096, -1);
    const BackendBuffer program =
        program_buffer(backend, copy64(gone.device_addr, data.device_addr));
    SubmitRequest request;
    request.program = program.handle;
    request.program_bytes = 96;
    std::uint64_t job = 0;
    JobRecord record;
    // Once with the buffer mapped (its translation now cached), once after its release.
    REQUIRE(backend.submit(request, job) == 0);
    REQUIRE(backend.wait(job, 0, false, record) == 0);
    CHECK(record.status == TPU_ERR_NONE);
    const std::uint64_t addr = gone.device_addr;
    backend.release_buffer(gone);
    REQUIRE(backend.submit(request, job) == 0);
    REQUIRE(backend.wait(job, 0, false, record) == 0);
    CHECK(record.status == TPU_ERR_MMU_FAULT);
    CHECK(record.fault_addr == addr);
    CHECK(record.error_pc == 0);
    const tpurt::DeviceCounters counters = backend.counters();
    CHECK(counters.jobs_done == 1);
    CHECK(counters.jobs_failed == 1);
    backend.release_buffer(program);
    backend.release_buffer(data);
}
