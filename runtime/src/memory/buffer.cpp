// SPDX-License-Identifier: MIT
// buffer.cpp - creating, mapping and releasing buffer objects (BO_CREATE, BO_INFO, mmap,
// GEM_CLOSE).
#include "tpurt/buffer.hpp"

#include "device/device_file.hpp"
#include "device/numa_placement.hpp"
#include "tpurt/error.hpp"

#include <drm/tpu_accel.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <utility>

namespace tpurt {

Buffer::Buffer(std::shared_ptr<detail::DeviceFile> file, std::size_t bytes, int numa_node)
    : file_(std::move(file)) {
    if (bytes == 0)
        throw Error(ErrorCode::InvalidArgument, "cannot allocate an empty buffer");
    const detail::PreferredNodeScope placement(numa_node);

    struct drm_tpu_bo_create create = {};
    create.size = bytes;
    file_->ioctl(DRM_IOCTL_TPU_BO_CREATE, &create,
                 ("DRM_IOCTL_TPU_BO_CREATE of " + std::to_string(bytes) + " bytes").c_str());
    handle_ = create.handle;
    device_addr_ = create.device_addr;
    size_ = create.size;
    try {
        struct drm_tpu_bo_info info = {};
        info.handle = handle_;
        file_->ioctl(DRM_IOCTL_TPU_BO_INFO, &info, "DRM_IOCTL_TPU_BO_INFO");
        void *map = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, file_->fd(),
                         static_cast<off_t>(info.mmap_offset));
        if (map == MAP_FAILED) {
            const int err = errno;
            throw Error(ErrorCode::SystemCall,
                        "mmap of a " + std::to_string(size_) + "-byte buffer on " + file_->path() +
                            " failed: " + std::strerror(err),
                        err);
        }
        map_ = map;
    } catch (...) {
        release();
        throw;
    }
}

Buffer::Buffer(Buffer &&other) noexcept
    : file_(std::move(other.file_)), handle_(std::exchange(other.handle_, 0)),
      device_addr_(std::exchange(other.device_addr_, 0)), size_(std::exchange(other.size_, 0)),
      map_(std::exchange(other.map_, nullptr)) {}

Buffer &Buffer::operator=(Buffer &&other) noexcept {
    if (this != &other) {
        release();
        file_ = std::move(other.file_);
        handle_ = std::exchange(other.handle_, 0);
        device_addr_ = std::exchange(other.device_addr_, 0);
        size_ = std::exchange(other.size_, 0);
        map_ = std::exchange(other.map_, nullptr);
    }
    return *this;
}

Buffer::~Buffer() {
    release();
}

void Buffer::release() noexcept {
    if (!file_)
        return;
    if (map_)
        munmap(map_, size_);
    if (handle_) {
        struct drm_gem_close close = {};
        close.handle = handle_;
        file_->try_ioctl(DRM_IOCTL_GEM_CLOSE, &close);
    }
    map_ = nullptr;
    handle_ = 0;
    file_.reset();
}

} // namespace tpurt
