// SPDX-License-Identifier: MIT
// buffer_pool.cpp - handing out and taking back recycled buffer objects (see buffer_pool.hpp).
#include "memory/buffer_pool.hpp"

#include "tpurt/error.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace tpurt::detail {

namespace {

constexpr std::size_t page_bytes = 4096;

} // namespace

PooledBuffer::~PooledBuffer() {
    if (pool_ && buffer_)
        pool_->give_back(std::move(*buffer_));
}

PooledBuffer BufferPool::acquire(std::size_t bytes) {
    if (bytes == 0)
        throw Error(ErrorCode::InvalidArgument, "cannot stage an empty array");
    const std::size_t limit = 2 * std::max(bytes, page_bytes);
    {
        std::lock_guard lock(mutex_);
        std::size_t best = idle_.size();
        for (std::size_t i = 0; i < idle_.size(); ++i) {
            const std::size_t size = idle_[i].size();
            if (size >= bytes && size < limit &&
                (best == idle_.size() || size < idle_[best].size()))
                best = i;
        }
        if (best != idle_.size()) {
            Buffer buffer = std::move(idle_[best]);
            idle_.erase(idle_.begin() + static_cast<std::ptrdiff_t>(best));
            cached_ -= buffer.size();
            return PooledBuffer(shared_from_this(), std::move(buffer));
        }
    }
    Buffer buffer = allocate_(std::bit_ceil(std::max(bytes, page_bytes)));
    std::lock_guard lock(mutex_);
    ++created_;
    return PooledBuffer(shared_from_this(), std::move(buffer));
}

PooledBuffer BufferPool::acquire_copy(const void *data, std::size_t bytes) {
    PooledBuffer pooled = acquire(bytes);
    std::memcpy(pooled.buffer().data(), data, bytes);
    return pooled;
}

std::size_t BufferPool::cached_bytes() const {
    std::lock_guard lock(mutex_);
    return cached_;
}

std::uint64_t BufferPool::created() const {
    std::lock_guard lock(mutex_);
    return created_;
}

void BufferPool::give_back(Buffer buffer) {
    std::lock_guard lock(mutex_);
    if (cached_ + buffer.size() > cached_limit_)
        return; // over the limit: the buffer object is closed here
    cached_ += buffer.size();
    idle_.push_back(std::move(buffer));
}

} // namespace tpurt::detail
