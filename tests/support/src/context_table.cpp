// SPDX-License-Identifier: MIT
// Context table in simulated host memory.
#include "tpu_test/context_table.hpp"

#include <stdexcept>

#include "tpu_hw.h"

namespace tpu::test {

ContextTable::ContextTable(HostMemory &mem, uint32_t entries)
    : mem_(mem), addr_(mem.alloc_contiguous(uint64_t(entries) * sizeof(tpu_ctx_entry))),
      entries_(entries) {}

void ContextTable::set(uint32_t ctx_id, uint64_t pt_root, uint64_t reserved) {
    if (ctx_id >= entries_)
        throw std::out_of_range("ContextTable::set: no such context");
    tpu_ctx_entry entry{pt_root, reserved};
    mem_.write(addr_ + uint64_t(ctx_id) * sizeof(entry), &entry, sizeof(entry));
}

} // namespace tpu::test
