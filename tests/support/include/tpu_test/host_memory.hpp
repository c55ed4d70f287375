// SPDX-License-Identifier: MIT
// HostMemory: simulated host physical memory for engine tests. A sparse arena (pages are only
// backed when touched) with a page allocator and the bounds-checked tpu_phys_rw_fn the engine
// calls; an access outside the arena fails, which the engine reports as TPU_ERR_BUS.
#pragma once

#include <cstdint>

#include "tpu_engine.h"

namespace tpu::test {

class HostMemory {
  public:
    static constexpr uint64_t kDefaultBytes = 1ull << 30;

    // bytes: a multiple of the 4 KiB page size. Throws std::bad_alloc if it cannot be mapped.
    explicit HostMemory(uint64_t bytes = kDefaultBytes);
    ~HostMemory();
    HostMemory(const HostMemory &) = delete;
    HostMemory &operator=(const HostMemory &) = delete;

    uint64_t size() const { return size_; }

    // A zeroed page for page tables or data. Consecutive calls return pages far apart (from
    // alternating ends of the arena), so a buffer mapped page by page is physically scattered.
    // The first MiB is never handed out: physical address 0 is never valid.
    uint64_t alloc_page();
    // bytes (rounded up to whole pages) of zeroed, physically contiguous memory.
    uint64_t alloc_contiguous(uint64_t bytes);

    // Bounds-checked access by physical address; throw std::out_of_range outside the arena.
    void read(uint64_t pa, void *out, uint64_t len) const;
    void write(uint64_t pa, const void *data, uint64_t len);

    // The memory callback for tpu_engine_create(); opaque must be this HostMemory.
    static int phys_rw(void *opaque, uint64_t addr, void *buf, uint64_t len, bool is_write);
    // tpu_phys_map_fn / tpu_phys_unmap_fn: a pointer into the memory, nullptr out of bounds.
    static void *phys_map(void *opaque, uint64_t addr, uint64_t len, bool is_write);
    static void phys_unmap(void *opaque, void *ptr, uint64_t len, bool is_write);

  private:
    bool contains(uint64_t pa, uint64_t len) const;

    uint8_t *base_;
    uint64_t size_;
    uint64_t bottom_; // next free page from the bottom
    uint64_t top_;    // one past the last free page at the top
    bool from_top_ = false;
};

} // namespace tpu::test
