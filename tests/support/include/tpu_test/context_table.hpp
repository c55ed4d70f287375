// SPDX-License-Identifier: MIT
// ContextTable: the device's context table in simulated host memory (what TPU_REG_CTX_TABLE
// points at), with raw access to its entries so tests can also build invalid ones.
#pragma once

#include <cstdint>

#include "tpu_test/host_memory.hpp"

namespace tpu::test {

class ContextTable {
  public:
    // A table of `entries` invalid (zero) contexts in physically contiguous memory.
    ContextTable(HostMemory &mem, uint32_t entries);

    uint64_t addr() const { return addr_; }
    uint32_t entries() const { return entries_; }

    // Writes entry ctx_id as given (pt_root includes TPU_PTE_VALID when valid).
    void set(uint32_t ctx_id, uint64_t pt_root, uint64_t reserved = 0);
    // Marks entry ctx_id invalid.
    void clear(uint32_t ctx_id) { set(ctx_id, 0); }

  private:
    HostMemory &mem_;
    uint64_t addr_;
    uint32_t entries_;
};

} // namespace tpu::test
