// SPDX-License-Identifier: MIT
// On-chip buffer with lazy zeroing of the dirty extent. Buffers of a huge page or more are
// aligned to huge pages and asked to be backed by them: the MXU kernels walk rows of large
// matrices thousands of bytes apart, and with 4 KiB pages nearly every row is a TLB miss.
#include "local_memory.hpp"

#include <algorithm>
#include <cstring>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tpu::engine {
namespace {

constexpr uint64_t kHugePage = 2u << 20;

uint8_t *allocate_zeroed(uint32_t bytes) {
    if (bytes < kHugePage)
        return static_cast<uint8_t *>(std::calloc(bytes, 1));
    const uint64_t rounded = (uint64_t(bytes) + kHugePage - 1) & ~(kHugePage - 1);
    auto *p = static_cast<uint8_t *>(std::aligned_alloc(kHugePage, rounded));
    if (!p)
        return nullptr;
#if defined(MADV_HUGEPAGE)
    madvise(p, rounded, MADV_HUGEPAGE); // only a hint: 4 KiB pages work too
#endif
    std::memset(p, 0, bytes);
    return p;
}

} // namespace

LocalMemory::LocalMemory(uint32_t bytes)
    : data_(allocate_zeroed(bytes)), size_(bytes), dirty_begin_(bytes) {
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
