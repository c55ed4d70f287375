// SPDX-License-Identifier: MIT
// test_faults.cpp - guest test through the driver's ioctls: MMU faults of DMA_IN, DMA_OUT,
// TIMESTAMP and host-sourced LOAD_W report the faulting device VA and instruction; bad
// opcodes and operands end the job where they occur; after each failure the card runs a job
// correctly; the performance counters (GET_PARAM) advance by what the jobs did; a reset through
// debugfs in the middle of a stream of jobs cancels the jobs in the ring and the next jobs run.
// Program-fetch faults cannot be provoked through the driver (a program always lies in a
// mapped BO): test_raw_device covers them. The reset case needs root (debugfs).
#include "insn_builders.hpp"
#include "uapi_helpers.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace guest;
using namespace uapi;

namespace {

constexpr std::uint32_t kBytes = 256;

struct drm_tpu_wait run(const std::vector<union tpu_insn> &program,
                        std::vector<std::uint32_t> bos = {}) {
    SubmittedProgram job(program, std::move(bos));
    struct drm_tpu_wait result;
    REQUIRE(wait_job(job.job_id(), result) == 0);
    return result;
}

// A DMA round trip through fresh buffers, checked byte for byte.
void check_card_works() {
    static std::uint8_t value = 0x40;
    value++;
    RawBo src(TPU_PAGE_SIZE), dst(TPU_PAGE_SIZE);
    std::memset(src.map, value, kBytes);
    struct drm_tpu_wait r =
        run({dma_insn(TPU_OP_DMA_IN, src.device_addr, 0, 1, kBytes),
             dma_insn(TPU_OP_DMA_OUT, dst.device_addr, 0, 1, kBytes), op_insn(TPU_OP_HALT)},
            {src.handle, dst.handle});
    REQUIRE(r.status == TPU_ERR_NONE);
    const auto *out = static_cast<const std::uint8_t *>(dst.map);
    CHECK(out[0] == value);
    CHECK(out[kBytes - 1] == value);
    CHECK(out[kBytes] == 0);
}

// LOAD_W of a 16 x 16 int8 tile straight from host memory (TPU_F_W_HOST, tpu_insn_dma layout).
union tpu_insn load_w_host_insn(std::uint64_t host_addr) {
    union tpu_insn insn = dma_insn(TPU_OP_LOAD_W, host_addr, 0, 16, 16);
    insn.dma.flags = TPU_F_W_HOST;
    insn.dma.local_stride = 0;
    return insn;
}

// A 16 x 16 weight tile and an 8 x 16 matmul of dtype: 2048 MACs.
std::vector<union tpu_insn> small_matmul(std::uint8_t dtype, std::uint32_t elem_bytes) {
    return {load_w_insn(dtype, 16, 16, elem_bytes), matmul_insn(dtype, 8, 16, 16, elem_bytes),
            op_insn(TPU_OP_HALT)};
}

std::string debugfs_dir() {
    struct stat st;
    if (stat("/sys/kernel/debug/accel", &st) != 0)
        mount("debugfs", "/sys/kernel/debug", "debugfs", 0, nullptr);
    char target[256] = "";
    ssize_t n = readlink("/sys/class/accel/accel0/device", target, sizeof(target) - 1);
    REQUIRE(n > 0);
    std::string device(target, std::size_t(n));
    return "/sys/kernel/debug/accel/" + device.substr(device.find_last_of('/') + 1);
}

// A "name: value" line of the debugfs status file.
std::uint64_t status_value(const std::string &dir, const std::string &name) {
    std::ifstream in(dir + "/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(name + ": ", 0) == 0)
            return std::stoull(line.substr(name.size() + 2), nullptr, 0);
    FAIL("no '" << name << "' in " << dir << "/status");
    return 0;
}

// Waits until the driver has written a job into the card's ring.
bool wait_for_ring(const std::string &dir) {
    for (int ms = 0; ms < 10000; ms++) {
        if (status_value(dir, "jobs_in_ring") > 0)
            return true;
        usleep(1000);
    }
    return false;
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
        r = run({op_insn(TPU_OP_NOP), dma_insn(TPU_OP_DMA_IN, hole, 0, 1, 64)});
        fault_addr = hole;
        error_pc = 1;
    }
    SECTION("DMA_IN running into the guard page after a buffer") {
        r = run({dma_insn(TPU_OP_DMA_IN, buf.device_addr + buf.size - 16, 0, 1, 64)}, {buf.handle});
        fault_addr = buf.device_addr + buf.size;
    }
    SECTION("DMA_OUT to an unmapped VA") {
        r = run({op_insn(TPU_OP_NOP), op_insn(TPU_OP_NOP),
                 dma_insn(TPU_OP_DMA_OUT, hole + 8, 0, 1, 64)});
        fault_addr = hole + 8;
        error_pc = 2;
    }
    SECTION("TIMESTAMP to an unmapped VA") {
        r = run({timestamp_insn(buf.device_addr, 1), timestamp_insn(hole + 16, 2)}, {buf.handle});
        fault_addr = hole + 16;
        error_pc = 1;
    }
    SECTION("LOAD_W from unmapped host memory") {
        r = run({load_w_host_insn(hole)});
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
    std::vector<union tpu_insn> p{op_insn(TPU_OP_NOP), op_insn(TPU_OP_NOP)};
    std::uint32_t status = 0;
    std::uint64_t fault_addr = 0;

    SECTION("unknown opcode") {
        p.push_back(op_insn(0x7f));
        status = TPU_ERR_BAD_OPCODE;
    }
    SECTION("DMA_IN with flags") {
        p.push_back(dma_insn(TPU_OP_DMA_IN, unmapped_va(), 0, 1, 64));
        p.back().dma.flags = 1;
        status = TPU_ERR_BAD_OPERAND;
    }
    SECTION("DMA_IN with an unknown dtype") {
        p.push_back(dma_insn(TPU_OP_DMA_IN, unmapped_va(), 0, 1, 64));
        p.back().dma.dtype = 9;
        status = TPU_ERR_BAD_OPERAND;
    }
    SECTION("HALT with a non-zero reserved byte") {
        p.push_back(op_insn(TPU_OP_HALT));
        p.back().raw[3] = 1;
        status = TPU_ERR_BAD_OPERAND;
    }
    SECTION("DMA_IN beyond the unified buffer") {
        p.push_back(dma_insn(TPU_OP_DMA_IN, unmapped_va(), std::uint32_t(ub_size - 8), 1, 64));
        status = TPU_ERR_UB_RANGE;
        fault_addr = ub_size;
    }
    SECTION("MATMUL without weights") {
        p.push_back(matmul_insn(TPU_DT_INT8, 4, 16, 16, 1));
        status = TPU_ERR_NO_WEIGHTS;
    }
    p.push_back(op_insn(TPU_OP_HALT));
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

    CHECK(run(small_matmul(TPU_DT_INT8, 1)).status == TPU_ERR_NONE);
    CHECK(run(small_matmul(TPU_DT_BF16, 2)).status == TPU_ERR_NONE);
    CHECK(run(small_matmul(TPU_DT_FP32, 4)).status == TPU_ERR_NONE);
    check_card_works();
    CHECK(run({op_insn(0x7f)}).status == TPU_ERR_BAD_OPCODE);

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

TEST_CASE("a debugfs reset cancels the jobs in the ring, later jobs run", "[faults][reset]") {
    const std::string dir = debugfs_dir();
    const std::uint64_t resets = status_value(dir, "resets");
    const std::uint64_t done = get_param(DRM_TPU_PARAM_CNT_JOBS_DONE);
    std::vector<std::unique_ptr<SubmittedProgram>> jobs;
    for (int i = 0; i < 6; i++)
        jobs.push_back(
            std::make_unique<SubmittedProgram>(busy_program(40), std::vector<std::uint32_t>{}));
    REQUIRE(wait_for_ring(dir));

    std::ofstream(dir + "/reset") << "1\n";
    unsigned canceled = 0;
    for (const auto &job : jobs) {
        struct drm_tpu_wait r;
        REQUIRE(wait_job(job->job_id(), r) == 0);
        INFO("status " << r.status);
        CHECK((r.status == TPU_ERR_NONE || r.status == DRM_TPU_JOB_CANCELED));
        canceled += r.status == DRM_TPU_JOB_CANCELED;
    }
    CHECK(canceled >= 1);
    CHECK(status_value(dir, "resets") == resets + 1);
    check_card_works();
    check_card_works();
    // Counters carry over the reset of the card's registers.
    CHECK(get_param(DRM_TPU_PARAM_CNT_JOBS_DONE) >= done + 2);
}
