// SPDX-License-Identifier: MIT
// On-chip buffer with lazy zeroing of the dirty extent: clear() only records it, and it is zeroed
// before the buffer is next read, except for the part a job's first writes overwrite in full. On
// Linux, buffers of a huge page or more are anonymous mappings aligned to huge pages and asked to
// be backed by them: the MXU kernels walk rows of large matrices thousands of bytes apart, and with
// 4 KiB pages nearly every row is a TLB miss. Like calloc's, the mapping's pages are zero and
// committed only when first touched.
#include "memory/local_memory.hpp"

#include <algorithm>
#include <cstring>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tpu::engine {
namespace {

#if defined(__linux__)
constexpr uint64_t kHugePage = 2u << 20;

// A zeroed mapping of `len` bytes (a multiple of kHugePage) at a kHugePage boundary, or null.
uint8_t *map_huge_aligned(uint64_t len) {
    void *raw =
        mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return nullptr;
    auto *base = static_cast<uint8_t *>(raw);
    const uint64_t head = (kHugePage - reinterpret_cast<uintptr_t>(base) % kHugePage) % kHugePage;
    if (head)
        munmap(base, head);
    munmap(base + head + len, kHugePage - head);
    madvise(base + head, len, MADV_HUGEPAGE); // only a hint: 4 KiB pages work too
    return base + head;
}
#endif

} // namespace

void LocalMemory::Free::operator()(uint8_t *p) const {
#if defined(__linux__)
    if (mapped) {
        munmap(p, mapped);
        return;
    }
#endif
    std::free(p);
}

LocalMemory::LocalMemory(uint32_t bytes) : size_(bytes), dirty_begin_(bytes) {
#if defined(__linux__)
    if (bytes >= kHugePage) {
        const uint64_t len = (uint64_t(bytes) + kHugePage - 1) & ~(kHugePage - 1);
        data_ = std::unique_ptr<uint8_t[], Free>(map_huge_aligned(len), Free{len});
    }
#endif
    if (!data_)
        data_ = std::unique_ptr<uint8_t[], Free>(static_cast<uint8_t *>(std::calloc(bytes, 1)),
                                                 Free{0});
    if (!data_)
        throw std::bad_alloc();
}

void LocalMemory::mark_dirty(uint64_t begin, uint64_t end) {
    dirty_begin_ = std::min(dirty_begin_, begin);
    dirty_end_ = std::max(dirty_end_, end);
}

void LocalMemory::clear() {
    // What the last clear left pending was neither read nor overwritten since: zeroed now rather
    // than merged with what was written since, whose extent may lie far from it. So every byte
    // zeroed here or by zero_pending() is one that zeroing at every clear zeroed too, at this
    // clear or the one before.
    zero_pending();
    if (dirty_begin_ < dirty_end_) {
        pending_begin_ = dirty_begin_;
        pending_end_ = dirty_end_;
    }
    dirty_begin_ = size_;
    dirty_end_ = 0;
}

void LocalMemory::zero_pending_now() {
    std::memset(data_.get() + pending_begin_, 0, pending_end_ - pending_begin_);
    pending_begin_ = pending_end_ = 0;
}

void LocalMemory::will_overwrite(uint64_t begin, uint64_t end) {
    if (pending_begin_ >= pending_end_ || end <= pending_begin_ || begin >= pending_end_)
        return;
    if (begin <= pending_begin_ && end >= pending_end_)
        pending_begin_ = pending_end_ = 0;
    else if (begin <= pending_begin_)
        pending_begin_ = end;
    else if (end >= pending_end_)
        pending_end_ = begin;
    else
        zero_pending_now();
}

} // namespace tpu::engine
