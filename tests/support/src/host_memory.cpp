// SPDX-License-Identifier: MIT
// Simulated host physical memory: an mmap'ed sparse arena with a scattering page allocator.
#include "tpu_test/host_memory.hpp"

#include <sys/mman.h>

#include <cstring>
#include <new>
#include <stdexcept>

#include "tpu_hw.h"

namespace tpu::test {
namespace {

constexpr uint64_t kReservedLow = 1ull << 20;

} // namespace

HostMemory::HostMemory(uint64_t bytes) : size_(bytes), bottom_(kReservedLow), top_(bytes) {
    if (bytes % TPU_PAGE_SIZE != 0 || bytes <= kReservedLow)
        throw std::invalid_argument("HostMemory: size must be whole pages above 1 MiB");
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        throw std::bad_alloc();
    base_ = static_cast<uint8_t *>(p);
}

HostMemory::~HostMemory() {
    munmap(base_, size_);
}

uint64_t HostMemory::alloc_page() {
    if (bottom_ >= top_)
        throw std::bad_alloc();
    from_top_ = !from_top_;
    if (from_top_) {
        top_ -= TPU_PAGE_SIZE;
        return top_;
    }
    uint64_t pa = bottom_;
    bottom_ += TPU_PAGE_SIZE;
    return pa;
}

uint64_t HostMemory::alloc_contiguous(uint64_t bytes) {
    uint64_t pages = (bytes + TPU_PAGE_SIZE - 1) / TPU_PAGE_SIZE;
    if (pages == 0 || pages > (top_ - bottom_) / TPU_PAGE_SIZE)
        throw std::bad_alloc();
    uint64_t pa = bottom_;
    bottom_ += pages * TPU_PAGE_SIZE;
    return pa;
}

bool HostMemory::contains(uint64_t pa, uint64_t len) const {
    return pa <= size_ && len <= size_ - pa;
}

void HostMemory::read(uint64_t pa, void *out, uint64_t len) const {
    if (!contains(pa, len))
        throw std::out_of_range("HostMemory::read outside the arena");
    std::memcpy(out, base_ + pa, len);
}

void HostMemory::write(uint64_t pa, const void *data, uint64_t len) {
    if (!contains(pa, len))
        throw std::out_of_range("HostMemory::write outside the arena");
    std::memcpy(base_ + pa, data, len);
}

int HostMemory::phys_rw(void *opaque, uint64_t addr, void *buf, uint64_t len, bool is_write) {
    auto *mem = static_cast<HostMemory *>(opaque);
    if (!mem->contains(addr, len))
        return -1;
    if (is_write)
        std::memcpy(mem->base_ + addr, buf, len);
    else
        std::memcpy(buf, mem->base_ + addr, len);
    return 0;
}

void *HostMemory::phys_map(void *opaque, uint64_t addr, uint64_t len, bool) {
    auto *mem = static_cast<HostMemory *>(opaque);
    return mem->contains(addr, len) ? mem->base_ + addr : nullptr;
}

void HostMemory::phys_unmap(void *, void *, uint64_t, bool) {}

} // namespace tpu::test
