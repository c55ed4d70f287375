// SPDX-License-Identifier: MIT
// AddressSpace: one context's device virtual address space, built the way the driver builds it:
// a 3-level page table (tpu_hw.h) in simulated host memory, installed in the context table.
// map() backs VA ranges with fresh, physically scattered pages; read()/write() copy through the
// page tables (ignoring permissions) so tests can stage inputs and check outputs.
#pragma once

#include <cstdint>
#include <vector>

#include "tpu_hw.h"
#include "tpu_test/context_table.hpp"
#include "tpu_test/host_memory.hpp"

namespace tpu::test {

enum Perm : uint64_t {
    kRead = TPU_PTE_READ,
    kWrite = TPU_PTE_WRITE,
    kReadWrite = TPU_PTE_READ | TPU_PTE_WRITE,
};

class AddressSpace {
  public:
    // Allocates a root table and makes it context ctx_id of table.
    AddressSpace(HostMemory &mem, ContextTable &table, uint32_t ctx_id);

    uint32_t ctx_id() const { return ctx_id_; }
    uint64_t root() const { return root_; }

    // Maps every page overlapping [va, va + bytes) with perms (kRead, kWrite or both). Pages
    // not yet mapped get fresh zeroed memory; mapped ones keep theirs and take the new perms.
    void map(uint64_t va, uint64_t bytes, uint64_t perms);
    // Maps the page containing va to physical page pa (which may lie outside the memory).
    void map_phys(uint64_t va, uint64_t pa, uint64_t perms);
    // Changes the permissions of mapped pages in [va, va + bytes).
    void protect(uint64_t va, uint64_t bytes, uint64_t perms);
    // Removes the mappings of [va, va + bytes) (the memory is not reused).
    void unmap(uint64_t va, uint64_t bytes);

    // Physical address of va; throws std::out_of_range if unmapped.
    uint64_t translate(uint64_t va) const;

    // Copy through the page tables regardless of permissions; throw if a page is unmapped.
    void write(uint64_t va, const void *data, uint64_t len);
    void read(uint64_t va, void *out, uint64_t len) const;

    template <class T> void write_vector(uint64_t va, const std::vector<T> &v) {
        write(va, v.data(), v.size() * sizeof(T));
    }
    template <class T> std::vector<T> read_vector(uint64_t va, uint64_t count) const {
        std::vector<T> v(count);
        read(va, v.data(), count * sizeof(T));
        return v;
    }

  private:
    // Physical address of va's leaf entry; 0 if an intermediate table is missing.
    uint64_t find_leaf(uint64_t va) const;
    // The same, creating missing intermediate tables.
    uint64_t make_leaf(uint64_t va);
    uint64_t load(uint64_t pa) const;
    void store(uint64_t pa, uint64_t value);

    HostMemory &mem_;
    uint32_t ctx_id_;
    uint64_t root_;
};

} // namespace tpu::test
