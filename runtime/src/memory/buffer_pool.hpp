// SPDX-License-Identifier: MIT
// buffer_pool.hpp - internal: recycled buffer objects. A PooledBuffer is used by one holder at
// a time (one job's program, or one host array staged for an op) and goes back to its pool
// when destroyed; the pool keeps up to cached_limit bytes of idle buffers and hands one out
// again for any request it fits without wasting more than half of it. In a steady state no
// buffer object is created per launch. Exclusive use matters for programs: the driver makes
// a job wait for earlier jobs on every buffer it names, its program's included, so jobs that
// shared a program buffer would be ordered where they were not before.
#pragma once

#include "tpurt/card/buffer.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace tpurt::detail {

class BufferPool;

class PooledBuffer {
  public:
    PooledBuffer(PooledBuffer &&) noexcept = default;
    PooledBuffer &operator=(PooledBuffer &&) noexcept = delete;
    ~PooledBuffer();

    Buffer &buffer() { return *buffer_; }
    const Buffer &buffer() const { return *buffer_; }

  private:
    friend class BufferPool;
    PooledBuffer(std::shared_ptr<BufferPool> pool, Buffer buffer)
        : pool_(std::move(pool)), buffer_(std::move(buffer)) {}

    std::shared_ptr<BufferPool> pool_;
    std::optional<Buffer> buffer_;
};

class BufferPool : public std::enable_shared_from_this<BufferPool> {
  public:
    using Allocate = std::function<Buffer(std::size_t bytes)>;

    BufferPool(Allocate allocate, std::size_t cached_limit)
        : allocate_(std::move(allocate)), cached_limit_(cached_limit) {}

    // A buffer of at least `bytes` (> 0): the smallest idle one that fits and is less than
    // twice max(bytes, 4 KiB), else a new one of a power of two bytes.
    PooledBuffer acquire(std::size_t bytes);
    // The same, holding a copy of `bytes` bytes at `data`.
    PooledBuffer acquire_copy(const void *data, std::size_t bytes);

    std::size_t cached_bytes() const;
    std::uint64_t created() const; // buffer objects made so far

  private:
    friend class PooledBuffer;
    void give_back(Buffer buffer);

    Allocate allocate_;
    const std::size_t cached_limit_;
    mutable std::mutex mutex_;
    std::vector<Buffer> idle_;
    std::size_t cached_ = 0;
    std::uint64_t created_ = 0;
};

} // namespace tpurt::detail
