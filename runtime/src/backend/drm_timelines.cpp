// SPDX-License-Identifier: MIT
// drm_timelines.cpp - timeline fences as DRM timeline syncobjs (SYNCOBJ_CREATE, _DESTROY,
// _QUERY, _TIMELINE_WAIT, _TIMELINE_SIGNAL, _TRANSFER).
#include "backend/drm_backend.hpp"

#include "tpurt/error.hpp"

#include <xf86drm.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace tpurt::detail {

namespace {

[[noreturn]] void system_error(const char *what, int err) {
    throw Error(ErrorCode::SystemCall, std::string(what) + " failed: " + std::strerror(err), err);
}

} // namespace

std::uint32_t DrmBackend::create_timeline() {
    std::uint32_t handle = 0;
    if (const int ret = drmSyncobjCreate(fd_, 0, &handle))
        system_error("DRM_IOCTL_SYNCOBJ_CREATE for a stream", -ret);
    return handle;
}

void DrmBackend::destroy_timeline(std::uint32_t timeline) noexcept {
    drmSyncobjDestroy(fd_, timeline);
}

std::uint64_t DrmBackend::timeline_value(std::uint32_t timeline) const {
    std::uint64_t value = 0;
    if (const int ret = drmSyncobjQuery(fd_, &timeline, &value, 1))
        system_error("DRM_IOCTL_SYNCOBJ_QUERY", -ret);
    return value;
}

bool DrmBackend::wait_timeline(std::uint32_t timeline, std::uint64_t point,
                               std::int64_t deadline_ns) const {
    const int ret = drmSyncobjTimelineWait(fd_, &timeline, &point, 1, deadline_ns,
                                           DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, nullptr);
    if (ret == -ETIME || ret == -ETIMEDOUT)
        return false;
    if (ret)
        system_error("DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT", -ret);
    return true;
}

void DrmBackend::signal_timeline(std::uint32_t timeline, std::uint64_t point) {
    if (const int ret = drmSyncobjTimelineSignal(fd_, &timeline, &point, 1))
        system_error("DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL", -ret);
}

void DrmBackend::import_point(std::uint32_t timeline, std::uint64_t point,
                              const TimelinePoint &from) {
    if (const int ret = drmSyncobjTransfer(fd_, timeline, point, from.timeline, from.point,
                                           DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT))
        system_error("DRM_IOCTL_SYNCOBJ_TRANSFER", -ret);
}

} // namespace tpurt::detail
