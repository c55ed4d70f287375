// SPDX-License-Identifier: MIT
// buffer.cpp - buffer objects: created, mapped and released through the device's backend.
#include "tpurt/card/buffer.hpp"

#include "backend/backend.hpp"
#include "tpurt/error.hpp"

#include <utility>

namespace tpurt {

Buffer::Buffer(std::shared_ptr<detail::Backend> backend, std::size_t bytes, int numa_node) {
    if (bytes == 0)
        throw Error(ErrorCode::InvalidArgument, "cannot allocate an empty buffer");
    const detail::BackendBuffer buffer = backend->create_buffer(bytes, numa_node);
    backend_ = std::move(backend);
    handle_ = buffer.handle;
    device_addr_ = buffer.device_addr;
    size_ = buffer.size;
    map_ = buffer.map;
}

Buffer::Buffer(Buffer &&other) noexcept
    : backend_(std::move(other.backend_)), handle_(std::exchange(other.handle_, 0)),
      device_addr_(std::exchange(other.device_addr_, 0)), size_(std::exchange(other.size_, 0)),
      map_(std::exchange(other.map_, nullptr)) {}

Buffer &Buffer::operator=(Buffer &&other) noexcept {
    if (this != &other) {
        release();
        backend_ = std::move(other.backend_);
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
    if (!backend_)
        return;
    if (handle_)
        backend_->release_buffer({handle_, device_addr_, size_, map_});
    map_ = nullptr;
    handle_ = 0;
    backend_.reset();
}

} // namespace tpurt
