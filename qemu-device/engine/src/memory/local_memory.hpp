// SPDX-License-Identifier: MIT
// LocalMemory: one on-chip buffer (unified buffer or accumulator memory) of a fixed size chosen
// at engine creation. Jobs must start with it zeroed; it remembers the extent written since the
// last clear so that clearing costs only what the previous job touched, and zeroes that extent
// lazily: the bytes a job overwrites in full before anything reads them (its DMA_INs) are never
// zeroed at all.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>

namespace tpu::engine {

class LocalMemory {
  public:
    // Zero-filled; throws std::bad_alloc if the memory cannot be allocated.
    explicit LocalMemory(uint32_t bytes);

    uint8_t *data() { return data_.get(); }
    const uint8_t *data() const { return data_.get(); }
    uint32_t size() const { return size_; }

    // Records that [begin, end) may have been written; end <= size().
    void mark_dirty(uint64_t begin, uint64_t end);
    // Everything written since the last clear reads as zero from now on; the zeroing itself is
    // left to zero_pending() or made unnecessary by will_overwrite().
    void clear();
    // Zeroes what must read as zero and is not yet: call before anything reads the memory, and
    // before writes that leave gaps (rows with bytes between them).
    void zero_pending() {
        if (pending_begin_ < pending_end_)
            zero_pending_now();
    }
    // Every byte of [begin, end) is about to be written (and none read before): bytes there that
    // must read as zero need not be zeroed. Zeroes the rest first if the range splits them.
    void will_overwrite(uint64_t begin, uint64_t end);

  private:
    // Frees calloc'd memory, or unmaps `mapped` bytes (local_memory.cpp). No default member
    // initialiser: unique_ptr value-initialises its deleter, so `mapped` starts at 0.
    struct Free {
        uint64_t mapped;
        void operator()(uint8_t *p) const;
    };
    void zero_pending_now();

    std::unique_ptr<uint8_t[], Free> data_;
    uint32_t size_;
    uint64_t dirty_begin_;
    uint64_t dirty_end_ = 0;
    // Bytes that read as zero but hold what a previous job wrote (empty when begin >= end).
    uint64_t pending_begin_ = 0;
    uint64_t pending_end_ = 0;
};

} // namespace tpu::engine
