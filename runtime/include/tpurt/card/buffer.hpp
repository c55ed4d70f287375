// SPDX-License-Identifier: MIT
// buffer.hpp - tpurt::Buffer, a buffer object of the card: host-visible memory mapped into the
// process (data()) and into the card's address space (device_addr()). Unmapped and closed
// when the Buffer goes; the driver keeps it alive for jobs still using it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace tpurt {

namespace detail {
class Backend;
}

class Buffer {
  public:
    Buffer(Buffer &&other) noexcept;
    Buffer &operator=(Buffer &&other) noexcept;
    Buffer(const Buffer &) = delete;
    Buffer &operator=(const Buffer &) = delete;
    ~Buffer();

    std::uint32_t handle() const { return handle_; }           // GEM handle, for raw ioctls
    std::uint64_t device_addr() const { return device_addr_; } // address in card programs
    std::size_t size() const { return size_; }                 // bytes, a whole number of pages
    void *data() { return map_; }
    const void *data() const { return map_; }

    // The buffer as an array of T (all of it, size() / sizeof(T) elements).
    template <typename T> std::span<T> as() { return {static_cast<T *>(map_), size_ / sizeof(T)}; }
    template <typename T> std::span<const T> as() const {
        return {static_cast<const T *>(map_), size_ / sizeof(T)};
    }

  private:
    friend class Device;
    Buffer(std::shared_ptr<detail::Backend> backend, std::size_t bytes, int numa_node);
    void release() noexcept;

    std::shared_ptr<detail::Backend> backend_;
    std::uint32_t handle_ = 0;
    std::uint64_t device_addr_ = 0;
    std::size_t size_ = 0;
    void *map_ = nullptr;
};

} // namespace tpurt
