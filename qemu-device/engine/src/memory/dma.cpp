// SPDX-License-Identifier: MIT
// 2-D DMA between host virtual memory and the unified buffer / accumulators, page by page,
// abortable between rows.
#include "memory/dma.hpp"

#include <algorithm>

namespace tpu::engine {
namespace {

uint64_t bytes_left_in_page(uint64_t va) {
    return TPU_PAGE_SIZE - (va & (TPU_PAGE_SIZE - 1));
}

} // namespace

// va + len cannot overflow below: translate() rejects every va at or beyond 2^39 before the
// next chunk is added, and len is at most a row (2^18 bytes) or a program (2^20 bytes).
Fault HostDma::read(uint64_t va, uint8_t *dst, uint64_t len, uint64_t *done) {
    uint64_t copied = 0;
    Fault f = kOk;
    while (copied < len) {
        uint64_t pa;
        // No invalidation completes between the translation and the copy.
        auto in_use = mmu_.use();
        f = mmu_.translate(va + copied, Access::Read, &pa);
        if (!f.ok())
            break;
        uint64_t chunk = std::min(len - copied, bytes_left_in_page(va + copied));
        if (!phys_.read(pa, dst + copied, chunk)) {
            f = make_fault(TPU_ERR_BUS, va + copied);
            break;
        }
        copied += chunk;
    }
    *done = copied;
    return f;
}

Fault HostDma::write(uint64_t va, const uint8_t *src, uint64_t len) {
    for (uint64_t copied = 0; copied < len;) {
        uint64_t pa;
        auto in_use = mmu_.use();
        Fault f = mmu_.translate(va + copied, Access::Write, &pa);
        if (!f.ok())
            return f;
        uint64_t chunk = std::min(len - copied, bytes_left_in_page(va + copied));
        if (!phys_.write(pa, src + copied, chunk))
            return make_fault(TPU_ERR_BUS, va + copied);
        copied += chunk;
    }
    return kOk;
}

Fault HostDma::transfer(const DmaInsn &insn, LocalMemory &local, const std::atomic<bool> &abort) {
    // Row 0 starts at host_addr; an address beyond the 39-bit space faults right there, and
    // below it the row addresses (< 2^39 + 2^48) cannot wrap.
    if (insn.host_addr >> TPU_VA_BITS)
        return make_fault(TPU_ERR_MMU_FAULT, insn.host_addr);

    if (!insn.to_host)
        local.mark_dirty(insn.local.addr, insn.local.end());
    // A row is at most 2^18 bytes, so checking for an abort between rows stops it promptly.
    for (uint32_t r = 0; r < insn.rows; r++) {
        if (abort.load(std::memory_order_relaxed))
            return make_fault(TPU_ERR_ABORTED);
        uint64_t va = insn.host_addr + r * insn.host_stride;
        uint8_t *row = local.data() + insn.local.addr + r * insn.local.stride;
        Fault f;
        if (insn.to_host) {
            f = write(va, row, insn.row_bytes);
        } else {
            uint64_t done;
            f = read(va, row, insn.row_bytes, &done);
        }
        if (!f.ok())
            return f;
    }
    return kOk;
}

} // namespace tpu::engine
