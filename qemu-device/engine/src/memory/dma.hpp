// SPDX-License-Identifier: MIT
// HostDma: moves bytes between device virtual memory (the bound context's address space) and
// on-chip buffers, page by page through the MMU. Used for DMA_IN / DMA_OUT and program fetch.
#pragma once

#include <atomic>
#include <cstdint>

#include "executor/fault.hpp"
#include "isa/decoder.hpp"
#include "memory/local_memory.hpp"
#include "memory/mmu.hpp"
#include "memory/phys_memory.hpp"

namespace tpu::engine {

class HostDma {
  public:
    HostDma(const PhysMemory &phys, Mmu &mmu) : phys_(phys), mmu_(mmu) {}

    // Copies len bytes at device VA va into dst (needs READ permission). *done = the bytes
    // copied before a fault (all of them on success).
    Fault read(uint64_t va, uint8_t *dst, uint64_t len, uint64_t *done);
    // Copies len bytes from src to device VA va (needs WRITE permission).
    Fault write(uint64_t va, const uint8_t *src, uint64_t len);

    // Executes a decoded DMA_IN / DMA_OUT between host memory and local (UB or ACC), row by
    // row in ascending order (rows contiguous on both sides as one span). Once abort is set it
    // stops before the next row (the next 256 KiB of a span) with TPU_ERR_ABORTED, leaving the
    // bytes already moved as they are (DMA_IN marks its whole destination dirty first).
    Fault transfer(const DmaInsn &insn, LocalMemory &local, const std::atomic<bool> &abort);

  private:
    Fault transfer_span(const DmaInsn &insn, LocalMemory &local, const std::atomic<bool> &abort);
    // read() and write() with the MMU's use lock held by the caller.
    Fault read_held(uint64_t va, uint8_t *dst, uint64_t len, uint64_t *done);
    Fault write_held(uint64_t va, const uint8_t *src, uint64_t len);

    const PhysMemory &phys_;
    Mmu &mmu_;
};

} // namespace tpu::engine
