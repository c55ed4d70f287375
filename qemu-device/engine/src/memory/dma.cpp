// SPDX-License-Identifier: MIT
// 2-D DMA between host virtual memory and the unified buffer / accumulators, page by page,
// abortable between rows.
#include "memory/dma.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

namespace tpu::engine {
namespace {

// A transfer holds the MMU's use lock for a batch of rows, not per page, since taking and
// releasing it costs as much as copying a page; it lets a waiting invalidation through after
// Mmu::kHoldBytes bytes or Mmu::kHoldTranslations translations, whichever comes first (short
// rows on distinct pages cost a translation each for few bytes).
constexpr uint64_t kHoldBytes = Mmu::kHoldBytes;

// A row's bytes within a page. Not inlined: GCC expands a memcpy of a size it knows to be at
// most a page into `rep movsq`, whose start-up costs more than the copy itself for the short
// rows of a strided DMA (128 bytes, tens of thousands per matmul); the library's memcpy moves
// them with a few vector loads and stores.
[[gnu::noinline]] void copy_bytes(uint8_t *dst, const uint8_t *src, uint64_t len) {
    std::memcpy(dst, src, len);
}

uint64_t bytes_left_in_page(uint64_t va) {
    return TPU_PAGE_SIZE - (va & (TPU_PAGE_SIZE - 1));
}

// Pages that [va, va + len) touches (len > 0): the translations copying it takes.
uint64_t pages_spanned(uint64_t va, uint64_t len) {
    return ((va + len - 1) >> TPU_PAGE_SHIFT) - (va >> TPU_PAGE_SHIFT) + 1;
}

// The rows of a strided transfer through mapped pages (PhysMemory::map): the page under the
// current row stays mapped for the rows after it on the same page, so that short rows (many to
// a page) cost a memcpy each instead of a translation and a memory callback each. A page that
// cannot be mapped goes through the callback. Translations, faults and their addresses are those
// of read_held() / write_held(); the caller holds the MMU's use lock while the window lives and
// releases the window before it lets the lock go.
class PageWindow {
  public:
    PageWindow(const PhysMemory &phys, Mmu &mmu, bool to_host)
        : phys_(phys), mmu_(mmu), to_host_(to_host) {}
    ~PageWindow() { release(); }
    PageWindow(const PageWindow &) = delete;
    PageWindow &operator=(const PageWindow &) = delete;

    // Copies len bytes between device VA va and buf (to the host if to_host), page by page.
    Fault copy(uint64_t va, uint8_t *buf, uint64_t len) {
        for (uint64_t done = 0; done < len;) {
            const uint64_t at = va + done;
            const uint64_t chunk = std::min(len - done, bytes_left_in_page(at));
            const uint64_t page = at & ~uint64_t(TPU_PAGE_SIZE - 1);
            if (page != page_ || !mapped_) {
                release();
                uint64_t pa;
                const Fault f = mmu_.translate(at, to_host_ ? Access::Write : Access::Read, &pa);
                if (!f.ok())
                    return f;
                translations_++;
                page_ = page;
                pa_page_ = pa & ~uint64_t(TPU_PAGE_SIZE - 1);
                ptr_ = phys_.map(pa_page_, TPU_PAGE_SIZE, to_host_);
                mapped_ = true;
            }
            const uint64_t off = at - page;
            if (ptr_) {
                if (to_host_)
                    copy_bytes(ptr_ + off, buf + done, chunk);
                else
                    copy_bytes(buf + done, ptr_ + off, chunk);
            } else if (!(to_host_ ? phys_.write(pa_page_ + off, buf + done, chunk)
                                  : phys_.read(pa_page_ + off, buf + done, chunk))) {
                return make_fault(TPU_ERR_BUS, at);
            }
            done += chunk;
        }
        return kOk;
    }

    // Translations made since the last call.
    uint64_t take_translations() { return std::exchange(translations_, 0); }

    // Gives the mapped page back; the next copy translates again.
    void release() {
        if (ptr_)
            phys_.unmap(ptr_, TPU_PAGE_SIZE, to_host_);
        ptr_ = nullptr;
        mapped_ = false;
    }

  private:
    const PhysMemory &phys_;
    Mmu &mmu_;
    const bool to_host_;
    bool mapped_ = false; // page_ translated (ptr_ set, or nullptr: through the callback)
    uint64_t page_ = 0;   // device VA of the page
    uint64_t pa_page_ = 0;
    uint8_t *ptr_ = nullptr;
    uint64_t translations_ = 0;
};

} // namespace

// va + len cannot overflow below: translate() rejects every va at or beyond 2^39 before the
// next chunk is added, and len is at most a row (2^18 bytes) or a program (2^20 bytes).
// No invalidation completes between a translation and its copy; one is let through every
// kHoldBytes (at most Mmu::kHoldTranslations + 1 pages).
Fault HostDma::read(uint64_t va, uint8_t *dst, uint64_t len, uint64_t *done) {
    auto in_use = mmu_.use();
    for (uint64_t off = 0;; off += kHoldBytes) {
        uint64_t chunk_done = 0;
        const Fault f =
            read_held(va + off, dst + off, std::min(kHoldBytes, len - off), &chunk_done);
        *done = off + chunk_done;
        if (!f.ok() || off + kHoldBytes >= len)
            return f;
        mmu_.pause(in_use);
    }
}

Fault HostDma::write(uint64_t va, const uint8_t *src, uint64_t len) {
    auto in_use = mmu_.use();
    for (uint64_t off = 0;; off += kHoldBytes) {
        const Fault f = write_held(va + off, src + off, std::min(kHoldBytes, len - off));
        if (!f.ok() || off + kHoldBytes >= len)
            return f;
        mmu_.pause(in_use);
    }
}

Fault HostDma::read_held(uint64_t va, uint8_t *dst, uint64_t len, uint64_t *done) {
    uint64_t copied = 0;
    Fault f = kOk;
    while (copied < len) {
        uint64_t pa;
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

Fault HostDma::write_held(uint64_t va, const uint8_t *src, uint64_t len) {
    for (uint64_t copied = 0; copied < len;) {
        uint64_t pa;
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

// Rows contiguous on both sides are one span: moved kHoldBytes at a time (page by page within),
// with the same bytes moved and the same fault address as row by row, in fewer calls.
Fault HostDma::transfer_span(const DmaInsn &insn, LocalMemory &local,
                             const std::atomic<bool> &abort) {
    uint8_t *ub = local.data() + insn.local.addr;
    const uint64_t len = insn.bytes();
    for (uint64_t off = 0; off < len; off += kHoldBytes) {
        if (abort.load(std::memory_order_relaxed))
            return make_fault(TPU_ERR_ABORTED);
        auto in_use = mmu_.use();
        const uint64_t chunk = std::min(kHoldBytes, len - off);
        uint64_t done;
        const Fault f = insn.to_host ? write_held(insn.host_addr + off, ub + off, chunk)
                                     : read_held(insn.host_addr + off, ub + off, chunk, &done);
        if (!f.ok())
            return f;
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
    if (insn.rows > 1 && insn.host_stride == insn.row_bytes && insn.local.stride == insn.row_bytes)
        return transfer_span(insn, local, abort);
    // A row is at most 2^18 bytes, so checking for an abort between rows stops it promptly.
    auto in_use = mmu_.use();
    // With map callbacks, rows go through mapped pages (declared after in_use: released first).
    std::optional<PageWindow> window;
    if (phys_.can_map())
        window.emplace(phys_, mmu_, insn.to_host);
    uint64_t held = 0;         // bytes moved since the lock was taken
    uint64_t translations = 0; // and translations made
    for (uint32_t r = 0; r < insn.rows; r++) {
        if (abort.load(std::memory_order_relaxed))
            return make_fault(TPU_ERR_ABORTED);
        if (window)
            translations += window->take_translations();
        if (held >= kHoldBytes || translations >= Mmu::kHoldTranslations) {
            if (window)
                window->release();
            mmu_.pause(in_use);
            held = 0;
            translations = 0;
        }
        held += insn.row_bytes;
        uint64_t va = insn.host_addr + r * insn.host_stride;
        uint8_t *row = local.data() + insn.local.addr + r * insn.local.stride;
        Fault f;
        if (window) {
            f = window->copy(va, row, insn.row_bytes);
        } else if (insn.to_host) {
            translations += pages_spanned(va, insn.row_bytes);
            f = write_held(va, row, insn.row_bytes);
        } else {
            translations += pages_spanned(va, insn.row_bytes);
            uint64_t done;
            f = read_held(va, row, insn.row_bytes, &done);
        }
        if (!f.ok())
            return f;
    }
    return kOk;
}

} // namespace tpu::engine
