// SPDX-License-Identifier: MIT
// fence_helpers.cpp - fenced raw-ioctl jobs and sync_file status (see fence_helpers.hpp).
#include "fence_helpers.hpp"

#include <xf86drm.h>

#include <linux/sync_file.h>

#include <cerrno>
#include <cstring>
#include <poll.h>
#include <stdexcept>
#include <string>
#include <sys/ioctl.h>
#include <unistd.h>

namespace fences {

namespace {

void check(int ret, const char *what) {
    if (ret != 0)
        throw std::runtime_error(std::string(what) + ": " + std::strerror(errno));
}

} // namespace

FencedJob::FencedJob(tpurt::Device &device, const tpurt::Program &program,
                     const std::vector<const tpurt::Buffer *> &buffers, std::uint32_t priority)
    : fd_(device.fd()), code_(device.allocate_copy(program.insns.data(), program.size_bytes())) {
    check(drmSyncobjCreate(fd_, 0, &syncobj_), "SYNCOBJ_CREATE");
    std::vector<std::uint32_t> handles;
    for (const tpurt::Buffer *buffer : buffers)
        handles.push_back(buffer->handle());
    struct drm_tpu_submit submit = {};
    submit.program_handle = code_.handle();
    submit.program_size = static_cast<std::uint32_t>(program.size_bytes());
    submit.bo_count = static_cast<std::uint32_t>(handles.size());
    submit.bo_handles = reinterpret_cast<std::uintptr_t>(handles.data());
    submit.out_syncobj = syncobj_;
    submit.priority = priority;
    check(drmIoctl(fd_, DRM_IOCTL_TPU_SUBMIT, &submit), "SUBMIT");
    id_ = submit.job_id;
    check(drmSyncobjExportSyncFile(fd_, syncobj_, &sync_file_), "SYNCOBJ_HANDLE_TO_FD");
}

FencedJob::~FencedJob() {
    if (sync_file_ >= 0)
        close(sync_file_);
    drmSyncobjDestroy(fd_, syncobj_); // ENODEV once the driver is gone: nothing to free then
}

int FencedJob::wait(struct drm_tpu_wait &result) const {
    result = {};
    result.job_id = id_;
    result.timeout_ns = 10'000'000'000;
    return drmIoctl(fd_, DRM_IOCTL_TPU_WAIT, &result) == 0 ? 0 : errno;
}

int fence_status(int sync_file, double seconds) {
    struct pollfd pfd = {sync_file, POLLIN, 0};
    if (poll(&pfd, 1, static_cast<int>(seconds * 1000)) < 0)
        throw std::runtime_error(std::string("poll(sync_file): ") + std::strerror(errno));
    struct sync_file_info info = {};
    check(ioctl(sync_file, SYNC_IOC_FILE_INFO, &info), "SYNC_IOC_FILE_INFO");
    return info.status;
}

std::int64_t fence_timestamp(int sync_file) {
    struct sync_fence_info fence = {};
    struct sync_file_info info = {};
    info.num_fences = 1;
    info.sync_fence_info = reinterpret_cast<std::uintptr_t>(&fence);
    check(ioctl(sync_file, SYNC_IOC_FILE_INFO, &info), "SYNC_IOC_FILE_INFO");
    if (info.status != 1)
        throw std::runtime_error("fence_timestamp: the fence has not signalled without error");
    return static_cast<std::int64_t>(fence.timestamp_ns);
}

int expected_fence_status(std::uint32_t wait_status) {
    switch (wait_status) {
    case TPU_ERR_NONE:
        return 1;
    case DRM_TPU_JOB_TIMEOUT:
        return -ETIMEDOUT;
    case DRM_TPU_JOB_CANCELED:
        return -ECANCELED;
    default:
        return -EIO;
    }
}

} // namespace fences
