// SPDX-License-Identifier: MIT
// test_faults.cpp - guest test through the driver's ioctls: MMU faults of DMA_IN, DMA_OUT,
// TIMESTAMP and host-sourced LOAD_W report the faulting device VA and instruction; bad
// opcodes and operands end the job where they occur; after each failure the card runs a job
// correctly; the performance counters (GET_PARAM) advance by what the jobs did; a reset through
// debugfs in the middle of a stream of jobs cancels the job the card was running (held there by
// the card's test-only hold, QEMU's x-test-hold) and runs the others again; a job that does not end
// within the driver's job_timeout_ms (the VM loads tpu.ko with 1000 ms for this binary; the card's
// rings stalled through debugfs) ends with DRM_TPU_JOB_TIMEOUT after a reset and the job behind it
// runs; a process killed in the middle of its jobs leaves another file's job and the card working.
// Program-fetch faults cannot be provoked through the driver (a program always lies in a
// mapped BO): test_raw_device covers them. The reset case needs root (debugfs).
#include "guest_programs.hpp"
#include "uapi_helpers.hpp"

#include <catch2/catch.hpp>

#include <tpurt/codegen/program_builder.hpp>
#include <tpurt/golden/reference.hpp>
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/tpurt.hpp>

#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace guest;
using namespace uapi;
using tpurt::DType;
using tpurt::Program;
using tpurt::ProgramBuilder;

namespace {

constexpr std::uint32_t kBytes = 256;

struct drm_tpu_wait run(const Program &program, std::vector<std::uint32_t> bos = {}) {
    SubmittedProgram job(program, std::move(bos));
    struct drm_tpu_wait result;
    REQUIRE(wait_job(job.job_id(), result) == 0);
    return result;
}

// Copies kBytes from src to dst through the unified buffer.
Program copy_program(const RawBo &src, const RawBo &dst) {
    return ProgramBuilder()
        .dma_in(int8_rows(src.device_addr, 0, 1, kBytes))
        .dma_out(int8_rows(dst.device_addr, 0, 1, kBytes))
        .halt()
        .finish();
}

// A DMA round trip through fresh buffers, checked byte for byte.
void check_card_works() {
    static std::uint8_t value = 0x40;
    value++;
    RawBo src(TPU_PAGE_SIZE), dst(TPU_PAGE_SIZE);
    std::memset(src.map, value, kBytes);
    struct drm_tpu_wait r = run(copy_program(src, dst), {src.handle, dst.handle});
    REQUIRE(r.status == TPU_ERR_NONE);
    const auto *out = static_cast<const std::uint8_t *>(dst.map);
    CHECK(out[0] == value);
    CHECK(out[kBytes - 1] == value);
    CHECK(out[kBytes] == 0);
}

// LOAD_W of a 16 x 16 int8 tile straight from host memory (TPU_F_W_HOST), then nothing else.
Program load_w_host(std::uint64_t host_addr) {
    return ProgramBuilder()
        .load_weights(tpurt::HostWeightLoad{
            .type = DType::Int8, .host_addr = host_addr, .host_stride = 16, .rows = 16, .cols = 16})
        .finish();
}

// A 16 x 16 weight tile and an 8 x 16 matmul of `type`: 2048 MACs.
Program small_matmul(DType type) {
    return ProgramBuilder()
        .load_weights(packed_weights(type, 16, 16))
        .matmul(packed_matmul(type, 8, 16, 16))
        .halt()
        .finish();
}

// A program of one instruction with an unknown opcode.
Program bad_opcode() {
    Program p = ProgramBuilder().nop().finish();
    p.insns[0].hdr.opcode = 0x7f;
    return p;
}

} // namespace

TEST_CASE("MMU faults report the faulting device VA and the card keeps working", "[faults]") {
    const std::uint64_t failed = get_param(DRM_TPU_PARAM_CNT_JOBS_FAILED);
    const std::uint64_t hole = unmapped_va();
    RawBo buf(2 * TPU_PAGE_SIZE);
    struct drm_tpu_wait r;
    std::uint64_t fault_addr = 0;
    std::uint32_t error_pc = 0;

    SECTION("DMA_IN from an unmapped VA") {
        r = run(ProgramBuilder().nop().dma_in(int8_rows(hole, 0, 1, 64)).finish());
        fault_addr = hole;
        error_pc = 1;
    }
    SECTION("DMA_IN running into the guard page after a buffer") {
        r = run(
            ProgramBuilder().dma_in(int8_rows(buf.device_addr + buf.size - 16, 0, 1, 64)).finish(),
            {buf.handle});
        fault_addr = buf.device_addr + buf.size;
    }
    SECTION("DMA_OUT to an unmapped VA") {
        r = run(ProgramBuilder().nop().nop().dma_out(int8_rows(hole + 8, 0, 1, 64)).finish());
        fault_addr = hole + 8;
        error_pc = 2;
    }
    SECTION("TIMESTAMP to an unmapped VA") {
        r = run(ProgramBuilder().timestamp(buf.device_addr, 1).timestamp(hole + 16, 2).finish(),
                {buf.handle});
        fault_addr = hole + 16;
        error_pc = 1;
    }
    SECTION("LOAD_W from unmapped host memory") {
        r = run(load_w_host(hole));
        fault_addr = hole;
    }
    CHECK(r.status == TPU_ERR_MMU_FAULT);
    CHECK(r.fault_addr == fault_addr);
    CHECK(r.error_pc == error_pc);
    CHECK(get_param(DRM_TPU_PARAM_CNT_JOBS_FAILED) == failed + 1);
    check_card_works();
}

TEST_CASE("bad instructions end the job at the failing instruction", "[faults]") {
    const std::uint64_t ub_size = get_param(DRM_TPU_PARAM_UB_SIZE);
    // Two NOPs, the instruction under test (built valid, then broken on purpose), HALT.
    ProgramBuilder builder;
    builder.nop().nop();
    std::function<void(union tpu_insn &)> break_it = [](union tpu_insn &) {};
    std::uint32_t status = 0;
    std::uint64_t fault_addr = 0;

    SECTION("unknown opcode") {
        builder.nop();
        break_it = [](union tpu_insn &insn) { insn.hdr.opcode = 0x7f; };
        status = TPU_ERR_BAD_OPCODE;
    }
    SECTION("DMA_IN with flags") {
        builder.dma_in(int8_rows(unmapped_va(), 0, 1, 64));
        break_it = [](union tpu_insn &insn) { insn.dma.flags = 1; };
        status = TPU_ERR_BAD_OPERAND;
    }
    SECTION("DMA_IN with an unknown dtype") {
        builder.dma_in(int8_rows(unmapped_va(), 0, 1, 64));
        break_it = [](union tpu_insn &insn) { insn.dma.dtype = 9; };
        status = TPU_ERR_BAD_OPERAND;
    }
    SECTION("HALT with a non-zero reserved byte") {
        builder.halt();
        break_it = [](union tpu_insn &insn) { insn.raw[3] = 1; };
        status = TPU_ERR_BAD_OPERAND;
    }
    SECTION("DMA_IN beyond the unified buffer") {
        builder.dma_in(int8_rows(unmapped_va(), std::uint32_t(ub_size - 8), 1, 64));
        status = TPU_ERR_UB_RANGE;
        fault_addr = ub_size;
    }
    SECTION("MATMUL without weights") {
        builder.matmul(packed_matmul(DType::Int8, 4, 16, 16));
        status = TPU_ERR_NO_WEIGHTS;
    }
    Program p = builder.halt().finish();
    break_it(p.insns[2]);
    struct drm_tpu_wait r = run(p);
    CHECK(r.status == status);
    CHECK(r.error_pc == 2);
    CHECK(r.fault_addr == fault_addr);
    check_card_works();
}

TEST_CASE("performance counters advance by what the jobs did", "[faults][counters]") {
    const std::uint32_t params[] = {
        DRM_TPU_PARAM_CNT_MACS,      DRM_TPU_PARAM_CNT_MACS_INT8,   DRM_TPU_PARAM_CNT_MACS_BF16,
        DRM_TPU_PARAM_CNT_MACS_FP32, DRM_TPU_PARAM_CNT_STALL,       DRM_TPU_PARAM_CNT_TLB_MISSES,
        DRM_TPU_PARAM_CNT_JOBS_DONE, DRM_TPU_PARAM_CNT_JOBS_FAILED, DRM_TPU_PARAM_CNT_CYCLES};
    std::vector<std::uint64_t> before;
    for (std::uint32_t param : params)
        before.push_back(get_param(param));
    auto delta = [&](std::size_t i) { return get_param(params[i]) - before[i]; };

    CHECK(run(small_matmul(DType::Int8)).status == TPU_ERR_NONE);
    CHECK(run(small_matmul(DType::Bf16)).status == TPU_ERR_NONE);
    CHECK(run(small_matmul(DType::Fp32)).status == TPU_ERR_NONE);
    check_card_works();
    CHECK(run(bad_opcode()).status == TPU_ERR_BAD_OPCODE);

    CHECK(delta(0) == 3 * 2048);
    CHECK(delta(1) == 2048);
    CHECK(delta(2) == 2048);
    CHECK(delta(3) == 2048);
    CHECK(get_param(params[4]) >= before[4]);
    CHECK(delta(5) >= 3); // the copy job's program, source and destination pages at least
    CHECK(delta(6) == 4);
    CHECK(delta(7) == 1);
    CHECK(delta(8) > 0);
}

// Deterministic on any host: the card holds the first job after its LOAD_W (the test-only
// card_hold, QEMU's x-test-hold: vm_faults), so the reset finds it running however fast the
// engine, and the five behind it still in the ring.
TEST_CASE("a debugfs reset cancels the running job, the others run again", "[faults][reset]") {
    const std::string dir = uapi::debugfs_dir();
    const std::uint64_t resets = uapi::debugfs_status(dir, "resets");
    const std::uint64_t done = get_param(DRM_TPU_PARAM_CNT_JOBS_DONE);
    CardHold hold(1);
    std::vector<std::unique_ptr<SubmittedProgram>> jobs;
    for (int i = 0; i < 6; i++)
        jobs.push_back(
            std::make_unique<SubmittedProgram>(busy_program(40), std::vector<std::uint32_t>{}));
    REQUIRE(hold.wait_held());
    REQUIRE(uapi::wait_for([&] { return uapi::debugfs_status(dir, "jobs_in_ring") == 6; },
                           std::chrono::seconds(10)));

    std::ofstream(dir + "/reset") << "1\n";
    std::vector<std::uint32_t> statuses;
    for (const auto &job : jobs) {
        struct drm_tpu_wait r;
        REQUIRE(wait_job(job->job_id(), r) == 0);
        statuses.push_back(r.status);
    }
    // The job the card was running; the ones behind it ran again after the reset.
    CHECK(statuses == std::vector<std::uint32_t>{DRM_TPU_JOB_CANCELED, 0, 0, 0, 0, 0});
    CHECK(hold.held() == -1);
    CHECK(uapi::debugfs_status(dir, "resets") == resets + 1);
    check_card_works();
    check_card_works();
    // Counters carry over the reset of the card's registers.
    CHECK(get_param(DRM_TPU_PARAM_CNT_JOBS_DONE) >= done + 2);
}

TEST_CASE("a disarmed hold holds no job; arming checks its instruction", "[faults][hold]") {
    CardHold hold(0);
    hold.disarm();
    check_card_works();
    CHECK(hold.held() == -1);
    const std::string dir = uapi::debugfs_dir();
    CHECK_FALSE(uapi::write_debugfs(dir, "card_hold", "-2"));
    CHECK_FALSE(
        uapi::write_debugfs(dir, "card_hold", std::to_string(TPU_TEST_HOLD_PC_MASK + 1).c_str()));
    CHECK(uapi::write_debugfs(dir, "card_hold", "-1"));
}

// Deterministic on any host: the card's rings are stalled (debugfs stall_queues) before the
// jobs are submitted, so the first one cannot end before the timeout, however fast the engine;
// the reset of its queue lets the card fetch again.
TEST_CASE("a job that does not end within job_timeout_ms is ended by a reset, other files go on",
          "[faults][timeout]") {
    const std::string dir = uapi::debugfs_dir();
    const std::uint64_t resets = uapi::debugfs_status(dir, "resets");
    tpurt::Device device = tpurt::Device::open(0);
    std::optional<StalledQueues> stalled;
    stalled.emplace();
    const auto start = std::chrono::steady_clock::now();
    tpurt::Job hung = device.submit(busy_program(40), {});
    tpurt::Job behind = device.submit(halt_program(), {});
    try {
        hung.wait(std::chrono::seconds(60));
        FAIL("a job in a stalled ring ended without a reset");
    } catch (const tpurt::JobError &error) {
        CHECK(error.status() == DRM_TPU_JOB_TIMEOUT);
        CHECK(std::string(error.what()).find("DRM_TPU_JOB_TIMEOUT") != std::string::npos);
    }
    // Not before the module's 1000 ms (its timer fires on a 4 ms tick, up to one tick early).
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(seconds >= 0.996);
    // Innocent: run again after the reset.
    CHECK_NOTHROW(behind.wait());
    CHECK(uapi::debugfs_status(dir, "resets") == resets + 1);
    stalled.reset();
    // This file and another both keep working.
    check_card_works();
    const std::vector<std::int8_t> a = tpurt::random_int8(64 * 64, 3);
    std::vector<std::int32_t> got(64 * 64), want(64 * 64);
    tpurt::matmul(device, a, a, got, 64, 64, 64);
    tpurt::reference_matmul(a, a, want, 64, 64, 64);
    CHECK(got == want);
}

TEST_CASE("a process killed in the middle of its jobs leaves the card working", "[faults][kill]") {
    // The child's first job is held on the card (its test-only hold) while the child dies.
    CardHold hold(kHangAt);
    int ready[2];
    REQUIRE(pipe(ready) == 0);
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        // Its own file and buffer, a long job in the ring and more behind it; then it waits to
        // be killed.
        close(ready[0]);
        try {
            tpurt::Device device = tpurt::Device::open(0);
            tpurt::Buffer data = device.allocate(TPU_PAGE_SIZE);
            std::vector<tpurt::Job> jobs;
            jobs.push_back(device.submit(busy_program(40), {&data}));
            for (int i = 0; i < 4; i++)
                jobs.push_back(device.submit(busy_program(40), {&data}));
            const char byte = 1;
            if (write(ready[1], &byte, 1) == 1)
                for (;;)
                    pause();
        } catch (...) {
        }
        _exit(1);
    }
    close(ready[1]);
    char byte = 0;
    const bool submitted = read(ready[0], &byte, 1) == 1;
    close(ready[0]);
    REQUIRE(hold.wait_held());
    // This process's job, queued behind the child's.
    RawBo src(TPU_PAGE_SIZE), dst(TPU_PAGE_SIZE);
    std::memset(src.map, 0x77, kBytes);
    SubmittedProgram mine(copy_program(src, dst), {src.handle, dst.handle});
    REQUIRE(kill(child, SIGKILL) == 0);
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    REQUIRE(submitted);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGKILL);
    // The child's job, held on the card when it died, goes on (unless the 1 s job timeout
    // ended it already).
    hold.release();

    struct drm_tpu_wait r;
    REQUIRE(wait_job(mine.job_id(), r) == 0);
    CHECK(r.status == TPU_ERR_NONE);
    CHECK(static_cast<const std::uint8_t *>(dst.map)[kBytes - 1] == 0x77);
    check_card_works();
}
