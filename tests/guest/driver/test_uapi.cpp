// SPDX-License-Identifier: MIT
// test_uapi.cpp - guest test: the driver's ioctls used raw, without the runtime: argument
// checking (EINVAL/ENOENT/EFAULT), job retirement, error completion of bad programs, the card
// staying usable after a failed job, syncobj fences, and the counters snapshot (COUNTERS).
#include "guest_programs.hpp"
#include "uapi_helpers.hpp"

#include <catch2/catch.hpp>

#include <xf86drm.h>

#include <cstddef>
#include <cstring>
#include <ctime>
#include <sys/mman.h>

using namespace guest;
using namespace uapi;
using tpurt::ProgramBuilder;

namespace {

struct drm_tpu_submit valid_submit(const RawBo &code, std::uint32_t insns) {
    struct drm_tpu_submit submit = {};
    submit.program_handle = code.handle;
    submit.program_size = insns * TPU_INSN_SIZE;
    return submit;
}

std::int64_t monotonic_ns() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

} // namespace

TEST_CASE("GET_PARAM checks its arguments", "[get_param]") {
    struct drm_tpu_get_param arg = {};
    arg.param = DRM_TPU_PARAM_MXU_ROWS;
    REQUIRE(ioctl_errno(device_fd(), DRM_IOCTL_TPU_GET_PARAM, &arg) == 0);
    CHECK(arg.value > 0);

    SECTION("unknown param") {
        arg = {};
        arg.param = 0xffff;
        CHECK(ioctl_errno(device_fd(), DRM_IOCTL_TPU_GET_PARAM, &arg) == EINVAL);
    }
    SECTION("non-zero pad") {
        arg = {};
        arg.param = DRM_TPU_PARAM_MXU_ROWS;
        arg.pad = 1;
        CHECK(ioctl_errno(device_fd(), DRM_IOCTL_TPU_GET_PARAM, &arg) == EINVAL);
    }
}

TEST_CASE("BO_CREATE and BO_INFO check their arguments", "[bo]") {
    struct drm_tpu_bo_create create = {};
    SECTION("size 0") {
        CHECK(ioctl_errno(device_fd(), DRM_IOCTL_TPU_BO_CREATE, &create) == EINVAL);
    }
    SECTION("non-zero flags") {
        create.size = 4096;
        create.flags = 1;
        CHECK(ioctl_errno(device_fd(), DRM_IOCTL_TPU_BO_CREATE, &create) == EINVAL);
    }
    SECTION("larger than the address space") {
        create.size = get_param(DRM_TPU_PARAM_VA_SIZE) + TPU_PAGE_SIZE;
        CHECK(ioctl_errno(device_fd(), DRM_IOCTL_TPU_BO_CREATE, &create) == EINVAL);
        create.size = ~std::uint64_t{0};
        CHECK(ioctl_errno(device_fd(), DRM_IOCTL_TPU_BO_CREATE, &create) == EINVAL);
    }
    SECTION("sizes round up to pages, addresses lie in the VA range") {
        RawBo bo(100);
        CHECK(bo.size == TPU_PAGE_SIZE);
        CHECK(bo.device_addr % TPU_PAGE_SIZE == 0);
        CHECK(bo.device_addr >= get_param(DRM_TPU_PARAM_VA_START));
        CHECK(bo.device_addr + bo.size <=
              get_param(DRM_TPU_PARAM_VA_START) + get_param(DRM_TPU_PARAM_VA_SIZE));
    }
    SECTION("BO_INFO of an unknown handle") {
        struct drm_tpu_bo_info info = {};
        info.handle = 0x7fffffff;
        CHECK(ioctl_errno(device_fd(), DRM_IOCTL_TPU_BO_INFO, &info) == ENOENT);
    }
    SECTION("BO_INFO with non-zero pad") {
        RawBo bo(4096);
        struct drm_tpu_bo_info info = {};
        info.handle = bo.handle;
        info.pad = 1;
        CHECK(ioctl_errno(device_fd(), DRM_IOCTL_TPU_BO_INFO, &info) == EINVAL);
    }
}

TEST_CASE("SUBMIT checks its arguments", "[submit]") {
    RawBo code(4096);
    const tpurt::Program halt = halt_program();
    std::memcpy(code.map, halt.insns.data(), halt.size_bytes());
    struct drm_tpu_submit submit = valid_submit(code, 1);

    SECTION("unknown program handle") {
        submit.program_handle = 0x7fffffff;
        CHECK(ioctl_errno(device_fd(), DRM_IOCTL_TPU_SUBMIT, &submit) == ENOENT);
    }
    SECTION("bo_handles pointing at unmapped memory") {
        void *page = mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        REQUIRE(page != MAP_FAILED);
        munmap(page, 4096);
        submit.bo_count = 1;
        submit.bo_handles = reinterpret_cast<std::uintptr_t>(page);
        CHECK(ioctl_errno(device_fd(), DRM_IOCTL_TPU_SUBMIT, &submit) == EFAULT);
    }
    SECTION("program size not a multiple of 32") {
        submit.program_size = TPU_INSN_SIZE + 1;
        CHECK(ioctl_errno(device_fd(), DRM_IOCTL_TPU_SUBMIT, &submit) == EINVAL);
    }
    SECTION("program size 0") {
        submit.program_size = 0;
        CHECK(ioctl_errno(device_fd(), DRM_IOCTL_TPU_SUBMIT, &submit) == EINVAL);
    }
    SECTION("program beyond the end of its BO") {
        submit.program_offset = static_cast<std::uint32_t>(code.size);
        CHECK(ioctl_errno(device_fd(), DRM_IOCTL_TPU_SUBMIT, &submit) == EINVAL);
    }
    SECTION("misaligned program offset") {
        submit.program_offset = 16;
        CHECK(ioctl_errno(device_fd(), DRM_IOCTL_TPU_SUBMIT, &submit) == EINVAL);
    }
    SECTION("non-zero reserved") {
        submit.reserved[1] = 1;
        CHECK(ioctl_errno(device_fd(), DRM_IOCTL_TPU_SUBMIT, &submit) == EINVAL);
    }
    SECTION("priority over DRM_TPU_PRIORITY_MAX") {
        submit.priority = DRM_TPU_PRIORITY_MAX + 1;
        CHECK(ioctl_errno(device_fd(), DRM_IOCTL_TPU_SUBMIT, &submit) == EINVAL);
    }
    SECTION("non-zero pad") {
        submit.pad = 1;
        CHECK(ioctl_errno(device_fd(), DRM_IOCTL_TPU_SUBMIT, &submit) == EINVAL);
    }
    SECTION("unknown flags") {
        submit.flags = 1u << 31;
        CHECK(ioctl_errno(device_fd(), DRM_IOCTL_TPU_SUBMIT, &submit) == EINVAL);
    }
    SECTION("bo_flags without DRM_TPU_SUBMIT_BO_FLAGS") {
        const std::uint32_t flags = DRM_TPU_BO_READ;
        submit.bo_flags = reinterpret_cast<std::uintptr_t>(&flags);
        CHECK(ioctl_errno(device_fd(), DRM_IOCTL_TPU_SUBMIT, &submit) == EINVAL);
    }
    SECTION("too many syncs") {
        submit.in_sync_count = DRM_TPU_MAX_SYNCS + 1;
        CHECK(ioctl_errno(device_fd(), DRM_IOCTL_TPU_SUBMIT, &submit) == EINVAL);
    }
    SECTION("a valid submission runs") {
        REQUIRE(ioctl_errno(device_fd(), DRM_IOCTL_TPU_SUBMIT, &submit) == 0);
        struct drm_tpu_wait result;
        REQUIRE(wait_job(submit.job_id, result) == 0);
        CHECK(result.status == TPU_ERR_NONE);
    }
}

TEST_CASE("on a card with one queue every priority runs on it", "[submit][priority]") {
    REQUIRE(get_param(DRM_TPU_PARAM_NUM_QUEUES) == 1);
    RawBo code(4096);
    const tpurt::Program halt = halt_program();
    std::memcpy(code.map, halt.insns.data(), halt.size_bytes());
    for (std::uint32_t priority = 0; priority <= DRM_TPU_PRIORITY_MAX; priority++) {
        INFO("priority " << priority);
        struct drm_tpu_submit submit = valid_submit(code, 1);
        submit.priority = priority;
        REQUIRE(ioctl_errno(device_fd(), DRM_IOCTL_TPU_SUBMIT, &submit) == 0);
        struct drm_tpu_wait result;
        REQUIRE(wait_job(submit.job_id, result) == 0);
        CHECK(result.status == TPU_ERR_NONE);
    }
    // A caller built against the header before the priority field passes the shorter struct:
    // the driver does not see what lies beyond it.
    struct drm_tpu_submit submit = valid_submit(code, 1);
    submit.priority = DRM_TPU_PRIORITY_MAX + 1;
    const unsigned long old_submit =
        _IOC(_IOC_READ | _IOC_WRITE, DRM_IOCTL_BASE, DRM_COMMAND_BASE + DRM_TPU_SUBMIT,
             offsetof(struct drm_tpu_submit, priority));
    REQUIRE(ioctl_errno(device_fd(), old_submit, &submit) == 0);
    struct drm_tpu_wait result;
    REQUIRE(wait_job(submit.job_id, result) == 0);
    CHECK(result.status == TPU_ERR_NONE);
}

TEST_CASE("WAIT retires a job exactly once", "[wait]") {
    struct drm_tpu_wait result;
    SECTION("unknown job id") {
        CHECK(wait_job(0xfffffffffffull, result) == ENOENT);
    }
    SECTION("second wait") {
        SubmittedProgram job(halt_program(), {});
        REQUIRE(wait_job(job.job_id(), result) == 0);
        CHECK(result.status == TPU_ERR_NONE);
        CHECK(wait_job(job.job_id(), result) == ENOENT);
    }
    SECTION("non-zero reserved") {
        SubmittedProgram job(halt_program(), {});
        result = {};
        result.job_id = job.job_id();
        result.timeout_ns = 1'000'000'000;
        result.reserved = 1;
        CHECK(ioctl_errno(device_fd(), DRM_IOCTL_TPU_WAIT, &result) == EINVAL);
        REQUIRE(wait_job(job.job_id(), result) == 0);
    }
}

TEST_CASE("a bad opcode fails the job and the card keeps working", "[errors]") {
    RawBo data(4096);
    auto *bytes = static_cast<std::uint8_t *>(data.map);
    for (int i = 0; i < 64; ++i)
        bytes[i] = static_cast<std::uint8_t>(i + 1);

    tpurt::Program bad = ProgramBuilder().nop().nop().halt().finish();
    bad.insns[1].hdr.opcode = 0x7f;
    SubmittedProgram failing(bad, {data.handle});
    struct drm_tpu_wait result;
    REQUIRE(wait_job(failing.job_id(), result) == 0);
    CHECK(result.status == TPU_ERR_BAD_OPCODE);
    CHECK(result.error_pc == 1);

    // Copy the first 64 bytes to offset 1024 through the unified buffer.
    SubmittedProgram copy(ProgramBuilder()
                              .dma_in(int8_rows(data.device_addr, 0, 4, 16))
                              .dma_out(int8_rows(data.device_addr + 1024, 0, 4, 16))
                              .halt()
                              .finish(),
                          {data.handle});
    REQUIRE(wait_job(copy.job_id(), result) == 0);
    CHECK(result.status == TPU_ERR_NONE);
    CHECK(std::memcmp(bytes, bytes + 1024, 64) == 0);
}

TEST_CASE("DMA to or from an unmapped address is an MMU fault", "[errors]") {
    RawBo data(4096);
    const std::uint64_t hole = unmapped_va();
    struct drm_tpu_wait result;

    SECTION("DMA_IN reads an unmapped page") {
        SubmittedProgram job(ProgramBuilder().dma_in(int8_rows(hole, 0, 1, 16)).halt().finish(),
                             {data.handle});
        REQUIRE(wait_job(job.job_id(), result) == 0);
        CHECK(result.status == TPU_ERR_MMU_FAULT);
        CHECK(result.error_pc == 0);
        CHECK(result.fault_addr == hole);
    }
    SECTION("DMA_OUT writes an unmapped page") {
        SubmittedProgram job(ProgramBuilder()
                                 .dma_in(int8_rows(data.device_addr, 0, 1, 16))
                                 .dma_out(int8_rows(hole, 0, 1, 16))
                                 .halt()
                                 .finish(),
                             {data.handle});
        REQUIRE(wait_job(job.job_id(), result) == 0);
        CHECK(result.status == TPU_ERR_MMU_FAULT);
        CHECK(result.error_pc == 1);
        CHECK(result.fault_addr == hole);
    }
}

TEST_CASE("out_syncobj is signalled when the job ends", "[syncobj]") {
    std::uint32_t syncobj = 0;
    REQUIRE(drmSyncobjCreate(device_fd(), 0, &syncobj) == 0);
    {
        SubmittedProgram job(halt_program(), {}, syncobj);
        const std::int64_t deadline = monotonic_ns() + 10'000'000'000;
        CHECK(drmSyncobjWait(device_fd(), &syncobj, 1, deadline, 0, nullptr) == 0);
        struct drm_tpu_wait result;
        REQUIRE(wait_job(job.job_id(), result) == 0);
        CHECK(result.status == TPU_ERR_NONE);
    }
    drmSyncobjDestroy(device_fd(), syncobj);
}

TEST_CASE("COUNTERS takes a snapshot of every counter, as many as asked for", "[counters]") {
    struct drm_tpu_counters c = {};
    struct drm_tpu_get_counters args = {};
    args.counters = reinterpret_cast<std::uintptr_t>(&c);
    args.size = sizeof(c);

    SubmittedProgram job(ProgramBuilder()
                             .load_weights(packed_weights(tpurt::DType::Int8, 16, 16))
                             .matmul(packed_matmul(tpurt::DType::Int8, 8, 16, 16))
                             .halt()
                             .finish(),
                         {});
    struct drm_tpu_wait result;
    REQUIRE(wait_job(job.job_id(), result) == 0);
    REQUIRE(ioctl_errno(device_fd(), DRM_IOCTL_TPU_COUNTERS, &args) == 0);
    CHECK(args.size == sizeof(c));
    // Nothing else runs: the snapshot equals the counters read one by one.
    CHECK(c.macs == get_param(DRM_TPU_PARAM_CNT_MACS));
    CHECK(c.macs_int8 == get_param(DRM_TPU_PARAM_CNT_MACS_INT8));
    CHECK(c.jobs_done == get_param(DRM_TPU_PARAM_CNT_JOBS_DONE));
    CHECK(c.tlb_misses == get_param(DRM_TPU_PARAM_CNT_TLB_MISSES));
    CHECK(c.stall_cycles == get_param(DRM_TPU_PARAM_CNT_STALL));
    CHECK(c.cycles == get_param(DRM_TPU_PARAM_CNT_CYCLES));
    CHECK(c.mxu_busy_cycles > 0);
    CHECK(c.mxu_busy_cycles <= c.cycles);
    CHECK(c.macs >= 2048);

    SECTION("a shorter struct gets its prefix") {
        struct drm_tpu_counters part = {};
        args.counters = reinterpret_cast<std::uintptr_t>(&part);
        args.size = 2 * sizeof(std::uint64_t);
        REQUIRE(ioctl_errno(device_fd(), DRM_IOCTL_TPU_COUNTERS, &args) == 0);
        CHECK(args.size == 2 * sizeof(std::uint64_t));
        CHECK(part.cycles == c.cycles);
        CHECK(part.macs == 0);
    }
    SECTION("a longer one gets what the driver knows") {
        std::uint64_t more[32] = {};
        args.counters = reinterpret_cast<std::uintptr_t>(more);
        args.size = sizeof(more);
        REQUIRE(ioctl_errno(device_fd(), DRM_IOCTL_TPU_COUNTERS, &args) == 0);
        CHECK(args.size == sizeof(c));
        CHECK(more[sizeof(c) / 8] == 0);
    }
    SECTION("bad arguments") {
        args.size = 12;
        CHECK(ioctl_errno(device_fd(), DRM_IOCTL_TPU_COUNTERS, &args) == EINVAL);
        args.size = 0;
        CHECK(ioctl_errno(device_fd(), DRM_IOCTL_TPU_COUNTERS, &args) == EINVAL);
        args.size = sizeof(c);
        args.pad = 1;
        CHECK(ioctl_errno(device_fd(), DRM_IOCTL_TPU_COUNTERS, &args) == EINVAL);
        args.pad = 0;
        args.counters = 0;
        CHECK(ioctl_errno(device_fd(), DRM_IOCTL_TPU_COUNTERS, &args) == EFAULT);
    }
}
