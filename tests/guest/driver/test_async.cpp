// SPDX-License-Identifier: MIT
// test_async.cpp - guest test of the uapi for an asynchronous runtime: 10,000 jobs chained only
// by a timeline syncobj (in- and out-syncs, DRM_TPU_SUBMIT_NO_WAIT) run without any WAIT;
// jobs that read a buffer (DRM_TPU_BO_READ) leave it free for other readers while a writer
// waits (seen through the buffer's dma-buf implicit fences); WAIT takes an absolute deadline
// and reports every per-job figure of the card. Jobs that must not have ended when a check looks
// are submitted with the card's rings stalled (debugfs stall_queues: root, make -C driver builds).
#include "guest_programs.hpp"
#include "uapi_helpers.hpp"

#include <catch2/catch.hpp>

#include <tpurt/codegen/program_builder.hpp>
#include <tpurt/tpurt.hpp>

#include <xf86drm.h>

#include <linux/dma-buf.h>
#include <linux/sync_file.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <string>
#include <sys/ioctl.h>
#include <unistd.h>
#include <vector>

namespace {

std::int64_t monotonic_ns() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// A SUBMIT of the program in `code` on `fd`; returns the errno (0: success).
int submit(int fd, const tpurt::Buffer &code, std::size_t bytes, std::uint32_t flags,
           const std::vector<drm_tpu_sync> &in, const std::vector<drm_tpu_sync> &out,
           const std::vector<std::uint32_t> &bos = {},
           const std::vector<std::uint32_t> &bo_flags = {}, std::uint64_t *job_id = nullptr) {
    struct drm_tpu_submit args = {};
    args.program_handle = code.handle();
    args.program_size = static_cast<std::uint32_t>(bytes);
    args.flags = flags;
    args.bo_count = static_cast<std::uint32_t>(bos.size());
    args.bo_handles = reinterpret_cast<std::uintptr_t>(bos.data());
    args.bo_flags = reinterpret_cast<std::uintptr_t>(bo_flags.data());
    args.in_syncs = reinterpret_cast<std::uintptr_t>(in.data());
    args.in_sync_count = static_cast<std::uint32_t>(in.size());
    args.out_syncs = reinterpret_cast<std::uintptr_t>(out.data());
    args.out_sync_count = static_cast<std::uint32_t>(out.size());
    const int err = uapi::ioctl_errno(fd, DRM_IOCTL_TPU_SUBMIT, &args);
    if (job_id)
        *job_id = args.job_id;
    return err;
}

// Waits for `point` of timeline syncobj `handle`; true once signalled.
bool wait_point(int fd, std::uint32_t handle, std::uint64_t point, double seconds) {
    const std::int64_t deadline = monotonic_ns() + std::int64_t(seconds * 1e9);
    return drmSyncobjTimelineWait(fd, &handle, &point, 1, deadline,
                                  DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, nullptr) == 0;
}

// The status of the implicit fences of a BO that an access of `flags` (DMA_BUF_SYNC_READ or
// _WRITE) would wait for: 1 all signalled, 0 some pending.
int implicit_status(int dmabuf, std::uint32_t flags) {
    struct dma_buf_export_sync_file exp = {};
    exp.flags = flags;
    REQUIRE(ioctl(dmabuf, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &exp) == 0);
    struct sync_file_info info = {};
    REQUIRE(ioctl(exp.fd, SYNC_IOC_FILE_INFO, &info) == 0);
    close(exp.fd);
    return info.status;
}

} // namespace

TEST_CASE("10,000 jobs chained only by a timeline syncobj run without WAIT", "[async]") {
    constexpr std::uint64_t kJobs = 10000;
    tpurt::Device device = tpurt::Device::open(0);
    const int fd = device.fd();
    const tpurt::Program halt = guest::halt_program();
    tpurt::Buffer code = device.allocate_copy(halt.insns.data(), halt.size_bytes());
    std::uint32_t timeline = 0;
    REQUIRE(drmSyncobjCreate(fd, 0, &timeline) == 0);
    const std::uint64_t done = uapi::get_param(DRM_TPU_PARAM_CNT_JOBS_DONE);

    unsigned throttled = 0;
    for (std::uint64_t i = 0; i < kJobs; i++) {
        // Job i waits for point i (the job before it) and signals point i + 1.
        std::vector<drm_tpu_sync> in;
        if (i > 0)
            in.push_back({timeline, 0, i});
        const std::vector<drm_tpu_sync> out{{timeline, 0, i + 1}};
        int err;
        while ((err = submit(fd, code, halt.size_bytes(), DRM_TPU_SUBMIT_NO_WAIT, in, out)) ==
               EDQUOT) {
            // Too many in flight: let the older half end, as an async runtime would.
            throttled++;
            REQUIRE(wait_point(fd, timeline, i / 2 + 1, 60));
        }
        REQUIRE(err == 0);
    }
    REQUIRE(wait_point(fd, timeline, kJobs, 120));
    std::uint64_t value = 0;
    REQUIRE(drmSyncobjQuery(fd, &timeline, &value, 1) == 0);
    CHECK(value == kJobs);
    CHECK(uapi::get_param(DRM_TPU_PARAM_CNT_JOBS_DONE) - done == kJobs);
    INFO("throttled " << throttled << " times by max_file_jobs");
    drmSyncobjDestroy(fd, timeline);
}

// Item 12 of issue 24: a point without a fence gave EINVAL, not the documented ENOENT (the uapi
// header: no wait-for-submit), in a syncobj without any fence and beyond a timeline's last point.
TEST_CASE("an in-sync point without a fence is ENOENT", "[async]") {
    tpurt::Device device = tpurt::Device::open(0);
    const int fd = device.fd();
    const tpurt::Program halt = guest::halt_program();
    tpurt::Buffer code = device.allocate_copy(halt.insns.data(), halt.size_bytes());
    std::uint32_t timeline = 0;
    REQUIRE(drmSyncobjCreate(fd, 0, &timeline) == 0);
    CHECK(submit(fd, code, halt.size_bytes(), 0, {{timeline, 0, 0}}, {}) == ENOENT);
    CHECK(submit(fd, code, halt.size_bytes(), 0, {{timeline, 0, 1}}, {}) == ENOENT);
    REQUIRE(submit(fd, code, halt.size_bytes(), DRM_TPU_SUBMIT_NO_WAIT, {}, {{timeline, 0, 1}}) ==
            0);
    REQUIRE(wait_point(fd, timeline, 1, 60));
    CHECK(submit(fd, code, halt.size_bytes(), DRM_TPU_SUBMIT_NO_WAIT, {{timeline, 0, 1}}, {}) == 0);
    CHECK(submit(fd, code, halt.size_bytes(), 0, {{timeline, 0, 2}}, {}) == ENOENT);
    // An unknown syncobj, as before.
    CHECK(submit(fd, code, halt.size_bytes(), 0, {{timeline + 100, 0, 0}}, {}) == ENOENT);
    drmSyncobjDestroy(fd, timeline);
}

// Deterministic on any host: the card's rings are stalled (debugfs stall_queues) while the
// fences are looked at, so neither job can have ended, however fast the engine.
TEST_CASE("readers of a buffer do not wait for each other, a writer waits for them", "[async]") {
    tpurt::Device device = tpurt::Device::open(0);
    const int fd = device.fd();
    tpurt::Buffer weights = device.allocate(TPU_PAGE_SIZE);
    const tpurt::Program halt = guest::halt_program();
    tpurt::Buffer halt_code = device.allocate_copy(halt.insns.data(), halt.size_bytes());
    int dmabuf = -1;
    REQUIRE(drmPrimeHandleToFD(fd, weights.handle(), DRM_CLOEXEC | DRM_RDWR, &dmabuf) == 0);

    const std::vector<std::uint32_t> bos{weights.handle()};
    std::uint64_t reader = 0, writer = 0;
    {
        uapi::StalledQueues stalled;
        REQUIRE(submit(fd, halt_code, halt.size_bytes(), DRM_TPU_SUBMIT_BO_FLAGS, {}, {}, bos,
                       {DRM_TPU_BO_READ}, &reader) == 0);
        // A reader finds no writer to wait for; a writer must wait for the unfinished reader.
        CHECK(implicit_status(dmabuf, DMA_BUF_SYNC_READ) == 1);
        CHECK(implicit_status(dmabuf, DMA_BUF_SYNC_WRITE) == 0);
        REQUIRE(submit(fd, halt_code, halt.size_bytes(), DRM_TPU_SUBMIT_BO_FLAGS, {}, {}, bos,
                       {DRM_TPU_BO_WRITE}, &writer) == 0);
        CHECK(implicit_status(dmabuf, DMA_BUF_SYNC_READ) == 0);
    } // the card fetches again

    struct drm_tpu_wait w = {};
    w.job_id = writer;
    w.timeout_ns = 60'000'000'000;
    REQUIRE(uapi::ioctl_errno(fd, DRM_IOCTL_TPU_WAIT, &w) == 0);
    CHECK(w.status == TPU_ERR_NONE);
    w = {};
    w.job_id = reader;
    REQUIRE(uapi::ioctl_errno(fd, DRM_IOCTL_TPU_WAIT, &w) == 0);
    CHECK(w.status == TPU_ERR_NONE);
    CHECK(implicit_status(dmabuf, DMA_BUF_SYNC_WRITE) == 1);
    close(dmabuf);

    // Flags of 0 or unknown bits, or bo_flags without the SUBMIT flag, are refused.
    CHECK(submit(fd, halt_code, halt.size_bytes(), DRM_TPU_SUBMIT_BO_FLAGS, {}, {}, bos, {0}) ==
          EINVAL);
    CHECK(submit(fd, halt_code, halt.size_bytes(), DRM_TPU_SUBMIT_BO_FLAGS, {}, {}, bos, {4}) ==
          EINVAL);
}

TEST_CASE("WAIT takes an absolute deadline and reports every per-job figure", "[async]") {
    tpurt::Device device = tpurt::Device::open(0);
    const int fd = device.fd();
    const tpurt::Program program =
        tpurt::ProgramBuilder()
            .load_weights(guest::packed_weights(tpurt::DType::Int8, 64, 64))
            .matmul(guest::packed_matmul(tpurt::DType::Int8, 256, 64, 64))
            .halt()
            .finish();
    tpurt::Buffer code = device.allocate_copy(program.insns.data(), program.size_bytes());
    std::uint64_t id = 0;
    REQUIRE(submit(fd, code, program.size_bytes(), 0, {}, {}, {}, {}, &id) == 0);

    struct drm_tpu_wait w = {};
    w.job_id = id;
    w.flags = 0x2;
    CHECK(uapi::ioctl_errno(fd, DRM_IOCTL_TPU_WAIT, &w) == EINVAL);
    w.flags = DRM_TPU_WAIT_ABSOLUTE;
    w.timeout_ns = monotonic_ns() + 30'000'000'000;
    REQUIRE(uapi::ioctl_errno(fd, DRM_IOCTL_TPU_WAIT, &w) == 0);
    CHECK(w.status == TPU_ERR_NONE);
    CHECK(w.macs == 256ull * 64 * 64);
    CHECK(w.cycles > 0);
    CHECK(w.mxu_busy_cycles > 0);
    CHECK(w.mxu_busy_cycles <= w.cycles);
    CHECK(w.stall_cycles <= w.cycles);

    // A deadline already passed polls a job that has not ended (the card's rings stalled).
    const tpurt::Program halt = guest::halt_program();
    tpurt::Buffer halt_code = device.allocate_copy(halt.insns.data(), halt.size_bytes());
    w = {};
    {
        uapi::StalledQueues stalled;
        REQUIRE(submit(fd, halt_code, halt.size_bytes(), 0, {}, {}, {}, {}, &id) == 0);
        w.job_id = id;
        w.flags = DRM_TPU_WAIT_ABSOLUTE;
        w.timeout_ns = monotonic_ns() - 1'000'000;
        CHECK(uapi::ioctl_errno(fd, DRM_IOCTL_TPU_WAIT, &w) == ETIMEDOUT);
    }
    w.timeout_ns = monotonic_ns() + 60'000'000'000;
    REQUIRE(uapi::ioctl_errno(fd, DRM_IOCTL_TPU_WAIT, &w) == 0);
    CHECK(w.status == TPU_ERR_NONE);
}

// On two CPUs (ctest vm_async_smp2): a job's finished fence is seen signalled (its bit) before its
// callbacks have run, so free_job on the other CPU could drop the job's context while the callback
// that counts the job out of the jobs in flight (tpu_job_ended()) was about to read it: a NULL
// dereference in the interrupt handler, seen once in vm_ioctl_fuzz_smp2. The debugfs hook
// inject_slow_end makes each such callback spin 50 ms first; jobs queued in a stalled ring
// (stall_queues) then end one after the other while the scheduler frees those before them.
TEST_CASE("jobs ending while free_job runs on another CPU are counted out", "[async][slow_end]") {
    const std::string dir = uapi::debugfs_dir();
    tpurt::Device device = tpurt::Device::open(0);
    const int fd = device.fd();
    const tpurt::Program halt = guest::halt_program();
    tpurt::Buffer code = device.allocate_copy(halt.insns.data(), halt.size_bytes());
    std::uint32_t timeline = 0;
    REQUIRE(drmSyncobjCreate(fd, 0, &timeline) == 0);
    constexpr std::uint64_t kJobs = 32;
    REQUIRE(uapi::write_debugfs(dir, "inject_slow_end", "1"));
    {
        uapi::StalledQueues stalled;
        for (std::uint64_t point = 1; point <= kJobs; point++)
            REQUIRE(submit(fd, code, halt.size_bytes(), DRM_TPU_SUBMIT_NO_WAIT, {},
                           {{timeline, 0, point}}) == 0);
    } // the card runs them
    const bool ended = wait_point(fd, timeline, kJobs, 120);
    CHECK(uapi::write_debugfs(dir, "inject_slow_end", "0"));
    REQUIRE(ended);
    // Every job counted out of the jobs in flight (sysfs jobs_in_flight), once.
    char target[PATH_MAX];
    REQUIRE(realpath("/sys/class/accel/accel0/device", target) != nullptr);
    std::string in_flight;
    CHECK(uapi::wait_for(
        [&] {
            std::ifstream(std::string(target) + "/tpu/jobs_in_flight") >> in_flight;
            return in_flight == "0";
        },
        std::chrono::seconds(10)));
    drmSyncobjDestroy(fd, timeline);
}
