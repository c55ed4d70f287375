// SPDX-License-Identifier: MIT
// On-chip buffer with lazy zeroing of the dirty extent.
#include "local_memory.hpp"

#include <algorithm>
#include <cstring>
#include <new>

namespace tpu::engine {

LocalMemory::LocalMemory(uint32_t bytes)
    : data_(static_cast<uint8_t *>(std::calloc(bytes, 1))), size_(bytes), dirty_begin_(bytes) {
    if (!data_)
        throw std::bad_alloc();
}

void LocalMemory::mark_dirty(uint64_t begin, uint64_t end) {
    dirty_begin_ = std::min(dirty_begin_, begin);
    dirty_end_ = std::max(dirty_end_, end);
}

void LocalMemory::clear() {
    if (dirty_begin_ < dirty_end_)
        std::memset(data_.get() + dirty_begin_, 0, dirty_end_ - dirty_begin_);
    dirty_begin_ = size_;
    dirty_end_ = 0;
}

} // namespace tpu::engine
