// SPDX-License-Identifier: MIT
// LocalMemory: one on-chip buffer (unified buffer or accumulator memory) of a fixed size chosen
// at engine creation. Jobs must start with it zeroed; it remembers the extent written since the
// last clear so that clearing costs only what the previous job touched.
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
    // Zeroes everything written since the last clear.
    void clear();

  private:
    // Frees calloc'd memory, or unmaps `mapped` bytes (local_memory.cpp). No default member
    // initialiser: unique_ptr value-initialises its deleter, so `mapped` starts at 0.
    struct Free {
        uint64_t mapped;
        void operator()(uint8_t *p) const;
    };
    std::unique_ptr<uint8_t[], Free> data_;
    uint32_t size_;
    uint64_t dirty_begin_;
    uint64_t dirty_end_ = 0;
};

} // namespace tpu::engine
