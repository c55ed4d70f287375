// SPDX-License-Identifier: MIT
// Mmu: the card's device MMU. A job binds one context (an entry of the context table in host
// memory); translations then walk that context's 3-level page table (tpu_hw.h) through the
// physical memory callback, check the leaf's permissions and are kept in a small per-job
// translation cache, so page-table changes made by the driver between jobs are always seen.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>

#include "fault.hpp"
#include "phys_memory.hpp"

namespace tpu::engine {

enum class Access { Read, Write };

class Mmu {
  public:
    explicit Mmu(const PhysMemory &phys) : phys_(phys) {}

    // Location and size of the context table; safe to call while a job runs (the job keeps
    // the context it bound).
    void set_ctx_table(uint64_t addr, uint32_t entries);

    // Starts a job in context ctx_id: reads its context entry and empties the translation
    // cache. TPU_ERR_BAD_CTX if the id is out of range or the entry is not valid or has
    // reserved bits set; TPU_ERR_BUS if the entry cannot be read.
    Fault bind(uint32_t ctx_id);

    // Translates va for the given access: *pa = the physical address of va.
    // TPU_ERR_MMU_FAULT (fault address va) if va is beyond the 39-bit space, unmapped or not
    // permitted; TPU_ERR_BUS (fault address va) if a page-table entry cannot be read.
    Fault translate(uint64_t va, Access access, uint64_t *pa);

  private:
    struct CacheEntry {
        uint64_t vpn = ~0ull; // virtual page number, ~0 when empty
        uint64_t leaf = 0;    // the leaf page-table entry
    };
    static constexpr unsigned kCacheEntries = 256;

    Fault walk(uint64_t va, uint64_t *leaf);

    const PhysMemory &phys_;
    std::mutex table_lock_; // guards table_addr_ and table_entries_
    uint64_t table_addr_ = 0;
    uint32_t table_entries_ = 0;
    uint64_t root_ = 0; // physical address of the bound context's level-0 table
    std::array<CacheEntry, kCacheEntries> cache_{};
};

} // namespace tpu::engine
