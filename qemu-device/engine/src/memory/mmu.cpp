// SPDX-License-Identifier: MIT
// Device MMU: context lookup, 3-level page-table walk, permission check, and the TLB kept
// across jobs with its invalidation.
#include "memory/mmu.hpp"

#include <algorithm>
#include <thread>

namespace tpu::engine {

Mmu::Mmu(const PhysMemory &phys, uint32_t tlb_entries, const std::atomic<bool> &abort)
    : phys_(phys), tlb_(tlb_entries ? tlb_entries : kDefaultTlbEntries),
      ways_(std::min<uint32_t>(kWays, uint32_t(tlb_.size()))), sets_(tlb_.size() / ways_),
      abort_(abort) {}

void Mmu::wait_for_invalidations() const {
    while (invalidations_waiting_.load(std::memory_order_acquire) != 0)
        std::this_thread::yield();
}

void Mmu::set_ctx_table(uint64_t addr, uint32_t entries) {
    std::lock_guard<std::mutex> guard(table_lock_);
    table_addr_ = addr;
    table_entries_ = entries;
}

Fault Mmu::bind(uint32_t ctx_id) {
    root_ = 0;

    uint64_t table_addr;
    uint32_t table_entries;
    {
        std::lock_guard<std::mutex> guard(table_lock_);
        table_addr = table_addr_;
        table_entries = table_entries_;
    }
    if (ctx_id >= table_entries)
        return make_fault(TPU_ERR_BAD_CTX);

    uint64_t entry_addr;
    if (__builtin_add_overflow(table_addr, uint64_t(ctx_id) * sizeof(tpu_ctx_entry), &entry_addr))
        return make_fault(TPU_ERR_BUS);
    tpu_ctx_entry entry;
    if (!phys_.read(entry_addr, &entry, sizeof(entry)))
        return make_fault(TPU_ERR_BUS);
    if (!(entry.pt_root & TPU_PTE_VALID) || entry.reserved != 0)
        return make_fault(TPU_ERR_BAD_CTX);
    ctx_ = ctx_id;
    root_ = entry.pt_root & TPU_PTE_ADDR_MASK;
    return kOk;
}

Fault Mmu::walk(uint64_t va, uint64_t *leaf) {
    uint64_t table = root_;
    uint64_t pte = 0;
    for (unsigned level = 0; level < TPU_PT_LEVELS; level++) {
        uint64_t index = TPU_PT_INDEX(va, level);
        if (!phys_.read(table + index * sizeof(pte), &pte, sizeof(pte)))
            return make_fault(TPU_ERR_BUS, va);
        if (!(pte & TPU_PTE_VALID))
            return make_fault(TPU_ERR_MMU_FAULT, va);
        table = pte & TPU_PTE_ADDR_MASK;
    }
    *leaf = pte;
    return kOk;
}

size_t Mmu::set_of(uint32_t ctx, uint64_t vpn) const {
    // The context id is mixed in so that contexts using the same VAs (every process starts at
    // the same VA_START) do not evict each other.
    uint64_t h = (vpn ^ (uint64_t(ctx) << 20)) * 0x9e3779b97f4a7c15ull;
    return size_t((h >> 32) % sets_) * ways_;
}

Fault Mmu::translate(uint64_t va, Access access, uint64_t *pa) {
    if (va >> TPU_VA_BITS)
        return make_fault(TPU_ERR_MMU_FAULT, va);

    const uint64_t vpn = va >> TPU_PAGE_SHIFT;
    TlbEntry *const set = &tlb_[set_of(ctx_, vpn)];
    uint64_t leaf = 0;
    bool hit = false;
    uint64_t generation;
    {
        std::lock_guard<std::mutex> guard(tlb_lock_);
        for (uint32_t w = 0; w < ways_ && !hit; w++) {
            const TlbEntry &e = set[w];
            if (e.valid && e.ctx == ctx_ && e.vpn == vpn) {
                leaf = e.leaf;
                hit = true;
            }
        }
        generation = generation_;
    }
    if (!hit) {
        misses_.fetch_add(1, std::memory_order_relaxed);
        Fault f = walk(va, &leaf);
        if (!f.ok())
            return f;
        std::lock_guard<std::mutex> guard(tlb_lock_);
        if (generation == generation_ && !abort_.load(std::memory_order_relaxed)) {
            // An empty way, or the next victim.
            uint32_t way = next_victim_++ % ways_;
            for (uint32_t w = 0; w < ways_; w++)
                if (!set[w].valid) {
                    way = w;
                    break;
                }
            set[way] = TlbEntry{ctx_, true, vpn, leaf};
        }
    }

    uint64_t need = access == Access::Read ? TPU_PTE_READ : TPU_PTE_WRITE;
    if (!(leaf & need))
        return make_fault(TPU_ERR_MMU_FAULT, va);
    *pa = (leaf & TPU_PTE_ADDR_MASK) | (va & (TPU_PAGE_SIZE - 1));
    return kOk;
}

void Mmu::drop(uint32_t ctx_id) {
    std::lock_guard<std::mutex> guard(tlb_lock_);
    for (TlbEntry &e : tlb_)
        if (ctx_id == TPU_TLB_INVAL_ALL || e.ctx == ctx_id)
            e.valid = false;
    generation_++;
}

void Mmu::invalidate(uint32_t ctx_id) {
    // Waits for the translations in use, and keeps new ones out until the TLB is clean.
    invalidations_waiting_.fetch_add(1, std::memory_order_acq_rel);
    std::unique_lock<std::shared_mutex> in_use(use_lock_);
    invalidations_waiting_.fetch_sub(1, std::memory_order_acq_rel);
    drop(ctx_id);
}

} // namespace tpu::engine
