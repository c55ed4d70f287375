// SPDX-License-Identifier: MIT
// Device MMU: context lookup, 3-level page-table walk, permission check, translation cache.
#include "mmu.hpp"

namespace tpu::engine {

void Mmu::set_ctx_table(uint64_t addr, uint32_t entries) {
    std::lock_guard<std::mutex> guard(table_lock_);
    table_addr_ = addr;
    table_entries_ = entries;
}

Fault Mmu::bind(uint32_t ctx_id) {
    cache_.fill(CacheEntry{});
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

Fault Mmu::translate(uint64_t va, Access access, uint64_t *pa) {
    if (va >> TPU_VA_BITS)
        return make_fault(TPU_ERR_MMU_FAULT, va);

    uint64_t vpn = va >> TPU_PAGE_SHIFT;
    CacheEntry &slot = cache_[vpn % kCacheEntries];
    if (slot.vpn != vpn) {
        uint64_t leaf;
        Fault f = walk(va, &leaf);
        if (!f.ok())
            return f;
        slot = CacheEntry{vpn, leaf};
    }

    uint64_t need = access == Access::Read ? TPU_PTE_READ : TPU_PTE_WRITE;
    if (!(slot.leaf & need))
        return make_fault(TPU_ERR_MMU_FAULT, va);
    *pa = (slot.leaf & TPU_PTE_ADDR_MASK) | (va & (TPU_PAGE_SIZE - 1));
    return kOk;
}

} // namespace tpu::engine
