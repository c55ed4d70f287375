// SPDX-License-Identifier: MIT
// Mmu: the card's device MMU. A job binds one context (an entry of the context table in host
// memory); translations then walk that context's 3-level page table (tpu_hw.h) through the
// physical memory callback and check the leaf's permissions. Leaves are kept in a TLB tagged by
// context id that lives ACROSS jobs: a page-table change is seen only after the host invalidates
// the context (TLB_INVAL, tpu_engine_tlb_invalidate()), exactly like a hardware TLB.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <vector>

#include "executor/fault.hpp"
#include "memory/phys_memory.hpp"

namespace tpu::engine {

enum class Access { Read, Write };

class Mmu {
  public:
    static constexpr uint32_t kDefaultTlbEntries = 8192;
    static constexpr uint32_t kMaxTlbEntries = 65536;

    // tlb_entries: 0 = kDefaultTlbEntries, at most kMaxTlbEntries (see config_error()). While
    // abort is set (a reset is stopping the job) translations still work but fill no entry: a
    // job that keeps translating after a reset began cannot leave its context's pages behind.
    Mmu(const PhysMemory &phys, uint32_t tlb_entries, const std::atomic<bool> &abort);

    // Location and size of the context table; safe to call while a job runs (the job keeps
    // the context it bound).
    void set_ctx_table(uint64_t addr, uint32_t entries);

    // Starts a job in context ctx_id: reads its context entry (never cached). TPU_ERR_BAD_CTX
    // if the id is out of range or the entry is not valid or has reserved bits set;
    // TPU_ERR_BUS if the entry cannot be read.
    Fault bind(uint32_t ctx_id);

    // Translates va for the given access in the bound context: *pa = the physical address of
    // va. TPU_ERR_MMU_FAULT (fault address va) if va is beyond the 39-bit space, unmapped or not
    // permitted; TPU_ERR_BUS (fault address va) if a page-table entry cannot be read. Only
    // valid leaves enter the TLB; a permission miss is checked against the cached leaf.
    Fault translate(uint64_t va, Access access, uint64_t *pa);

    // Drops the TLB entries of context ctx_id, or all of them for TPU_TLB_INVAL_ALL. Safe from
    // any thread while a job runs: its next translation sees the page tables again. Returns
    // once no translation made before the call can still be used: every access made under
    // use() has ended, so the host may free the pages of a mapping it removed.
    void invalidate(uint32_t ctx_id);
    // Drops the entries as invalidate() does, without waiting for the translations in use:
    // the next translation walks the page tables. Never waits for a page copy.
    void drop(uint32_t ctx_id);

    // Held (shared) by a user of the MMU from a translation until it is done with the
    // physical address (HostDma: translate, then copy one page); invalidate() waits for it.
    // Users hold it for at most kHoldTranslations translations (or kHoldBytes bytes) at a time
    // and give way to a waiting invalidation before they take it again.
    static constexpr uint32_t kHoldTranslations = 64;
    static constexpr uint64_t kHoldBytes = 256u << 10;
    std::shared_lock<std::shared_mutex> use() {
        wait_for_invalidations();
        return std::shared_lock(use_lock_);
    }
    // Lets a waiting invalidation through between two holds of in_use (kept held on return).
    void pause(std::shared_lock<std::shared_mutex> &in_use) {
        in_use.unlock();
        wait_for_invalidations();
        in_use.lock();
    }

    // Page-table walks since creation (TLB misses that reached the tables), for the counters.
    uint64_t misses() const { return misses_.load(std::memory_order_relaxed); }

  private:
    struct TlbEntry {
        uint32_t ctx = 0;
        bool valid = false;
        uint64_t vpn = 0;  // virtual page number
        uint64_t leaf = 0; // the leaf page-table entry
    };

    Fault walk(uint64_t va, uint64_t *leaf);
    // Yields while an invalidate() waits for the use lock: a reader-preferring shared_mutex
    // would otherwise let a user that drops and retakes it at once starve the invalidation.
    void wait_for_invalidations() const;
    // The first entry of the set that (ctx, vpn) maps to.
    size_t set_of(uint32_t ctx, uint64_t vpn) const;

    const PhysMemory &phys_;
    std::mutex table_lock_; // guards table_addr_ and table_entries_
    uint64_t table_addr_ = 0;
    uint32_t table_entries_ = 0;
    // The bound context, owned by the thread running the job.
    uint32_t ctx_ = 0;
    uint64_t root_ = 0; // physical address of the bound context's level-0 table

    // tlb_ and generation_ are guarded by tlb_lock_. A walk runs without the lock; an
    // invalidation during it bumps generation_ and the walk's result is then not cached.
    std::mutex tlb_lock_;
    std::shared_mutex use_lock_; // shared: a translation in use; exclusive: invalidate()
    // Sets of ways_ entries (up to kWays): a working set close to the TLB's size, walked in
    // the same order job after job, keeps most of its entries, where a direct-mapped TLB
    // would lose every page whose slot another took.
    static constexpr uint32_t kWays = 4;
    std::vector<TlbEntry> tlb_;
    uint32_t ways_;
    size_t sets_;
    uint32_t next_victim_ = 0; // fills go round the ways, not per set: a scan does not thrash
    uint64_t generation_ = 0;
    std::atomic<uint64_t> misses_{0};
    const std::atomic<bool> &abort_;
    std::atomic<uint32_t> invalidations_waiting_{0};
};

} // namespace tpu::engine
