// SPDX-License-Identifier: MIT
// Page-table builder for one device context in simulated host memory.
#include "tpu_test/address_space.hpp"

#include <algorithm>
#include <stdexcept>

namespace tpu::test {
namespace {

constexpr uint64_t kPageMask = TPU_PAGE_SIZE - 1;

void check_va(uint64_t va, uint64_t bytes) {
    if (va >> TPU_VA_BITS || bytes > (1ull << TPU_VA_BITS) - va)
        throw std::out_of_range("AddressSpace: range beyond the 39-bit device VA space");
}

} // namespace

AddressSpace::AddressSpace(HostMemory &mem, ContextTable &table, uint32_t ctx_id)
    : mem_(mem), ctx_id_(ctx_id), root_(mem.alloc_page()) {
    table.set(ctx_id, root_ | TPU_PTE_VALID);
}

uint64_t AddressSpace::load(uint64_t pa) const {
    uint64_t v;
    mem_.read(pa, &v, sizeof(v));
    return v;
}

void AddressSpace::store(uint64_t pa, uint64_t value) {
    mem_.write(pa, &value, sizeof(value));
}

uint64_t AddressSpace::find_leaf(uint64_t va) const {
    uint64_t table = root_;
    for (unsigned level = 0; level + 1 < TPU_PT_LEVELS; level++) {
        uint64_t pte = load(table + TPU_PT_INDEX(va, level) * sizeof(uint64_t));
        if (!(pte & TPU_PTE_VALID))
            return 0;
        table = pte & TPU_PTE_ADDR_MASK;
    }
    return table + TPU_PT_INDEX(va, TPU_PT_LEVELS - 1) * sizeof(uint64_t);
}

uint64_t AddressSpace::make_leaf(uint64_t va) {
    uint64_t table = root_;
    for (unsigned level = 0; level + 1 < TPU_PT_LEVELS; level++) {
        uint64_t entry_addr = table + TPU_PT_INDEX(va, level) * sizeof(uint64_t);
        uint64_t pte = load(entry_addr);
        if (!(pte & TPU_PTE_VALID)) {
            pte = mem_.alloc_page() | TPU_PTE_VALID;
            store(entry_addr, pte);
        }
        table = pte & TPU_PTE_ADDR_MASK;
    }
    return table + TPU_PT_INDEX(va, TPU_PT_LEVELS - 1) * sizeof(uint64_t);
}

void AddressSpace::map(uint64_t va, uint64_t bytes, uint64_t perms) {
    check_va(va, bytes);
    for (uint64_t page = va & ~kPageMask; page < va + bytes; page += TPU_PAGE_SIZE) {
        uint64_t entry_addr = make_leaf(page);
        uint64_t pte = load(entry_addr);
        uint64_t pa = pte & TPU_PTE_VALID ? pte & TPU_PTE_ADDR_MASK : mem_.alloc_page();
        store(entry_addr, pa | perms | TPU_PTE_VALID);
    }
}

void AddressSpace::map_phys(uint64_t va, uint64_t pa, uint64_t perms) {
    check_va(va, 1);
    store(make_leaf(va), (pa & TPU_PTE_ADDR_MASK) | perms | TPU_PTE_VALID);
}

void AddressSpace::protect(uint64_t va, uint64_t bytes, uint64_t perms) {
    check_va(va, bytes);
    for (uint64_t page = va & ~kPageMask; page < va + bytes; page += TPU_PAGE_SIZE) {
        uint64_t entry_addr = find_leaf(page);
        uint64_t pte = entry_addr ? load(entry_addr) : 0;
        if (!(pte & TPU_PTE_VALID))
            throw std::out_of_range("AddressSpace::protect: page not mapped");
        store(entry_addr, (pte & TPU_PTE_ADDR_MASK) | perms | TPU_PTE_VALID);
    }
}

void AddressSpace::unmap(uint64_t va, uint64_t bytes) {
    check_va(va, bytes);
    for (uint64_t page = va & ~kPageMask; page < va + bytes; page += TPU_PAGE_SIZE)
        if (uint64_t entry_addr = find_leaf(page))
            store(entry_addr, 0);
}

uint64_t AddressSpace::translate(uint64_t va) const {
    check_va(va, 1);
    uint64_t entry_addr = find_leaf(va);
    uint64_t pte = entry_addr ? load(entry_addr) : 0;
    if (!(pte & TPU_PTE_VALID))
        throw std::out_of_range("AddressSpace::translate: page not mapped");
    return (pte & TPU_PTE_ADDR_MASK) | (va & kPageMask);
}

void AddressSpace::write(uint64_t va, const void *data, uint64_t len) {
    const auto *src = static_cast<const uint8_t *>(data);
    while (len > 0) {
        uint64_t chunk = std::min<uint64_t>(len, TPU_PAGE_SIZE - (va & kPageMask));
        mem_.write(translate(va), src, chunk);
        va += chunk;
        src += chunk;
        len -= chunk;
    }
}

void AddressSpace::read(uint64_t va, void *out, uint64_t len) const {
    auto *dst = static_cast<uint8_t *>(out);
    while (len > 0) {
        uint64_t chunk = std::min<uint64_t>(len, TPU_PAGE_SIZE - (va & kPageMask));
        mem_.read(translate(va), dst, chunk);
        va += chunk;
        dst += chunk;
        len -= chunk;
    }
}

} // namespace tpu::test
