// SPDX-License-Identifier: MIT
// raw_card.hpp - the card driven from userspace without tpu.ko, for test_raw_device (root only):
// the PCI function found and unbound/rebound through sysfs, BAR0 mapped from resource0, bus
// mastering enabled through the config file, and host memory the card can reach — locked pages
// whose physical addresses come from /proc/self/pagemap — holding the context table, page tables,
// rings, completion records, programs and data.
#pragma once

#include <tpu_hw.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace raw {

// Polls cond() until it holds or `seconds` pass; returns its last value.
template <class Cond> bool poll_until(Cond cond, double seconds = 30.0) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (!cond()) {
        if (std::chrono::steady_clock::now() > deadline)
            return cond();
    }
    return true;
}

// The card's PCI function in sysfs (/sys/bus/pci/devices/<address>).
std::string find_card();
// Unbinds tpu.ko from the card if it is bound; bind_driver() binds it again and waits for
// /dev/accel/accel0.
void unbind_driver(const std::string &card);
void bind_driver(const std::string &card);
// The card, unbound from tpu.ko on the first call (the raw tests own it for the whole process).
const std::string &unbound_card();

// A page of host memory the card can reach.
struct Page {
    void *ptr = nullptr;
    std::uint64_t phys = 0;
};

// Zeroed pages locked in RAM, handed out one by one; released (munmap) on destruction, so the
// card must be reset before the pool goes away.
class PagePool {
  public:
    explicit PagePool(std::size_t pages);
    ~PagePool();
    PagePool(const PagePool &) = delete;
    PagePool &operator=(const PagePool &) = delete;

    Page page();

  private:
    std::uint8_t *base_ = nullptr;
    std::size_t count_ = 0;
    std::size_t next_ = 0;
    std::vector<std::uint64_t> phys_;
};

// BAR0 of the card, memory decoding and bus mastering enabled.
class Bar {
  public:
    explicit Bar(const std::string &card);
    ~Bar();
    Bar(const Bar &) = delete;
    Bar &operator=(const Bar &) = delete;

    std::uint32_t read32(std::uint32_t reg) const;
    std::uint64_t read64(std::uint32_t reg) const;
    void write32(std::uint32_t reg, std::uint32_t value);
    void write64(std::uint32_t reg, std::uint64_t value);

    std::uint32_t qread32(unsigned q, std::uint32_t reg) const {
        return read32(TPU_REG_QUEUE(q, reg));
    }
    std::uint64_t qread64(unsigned q, std::uint32_t reg) const {
        return read64(TPU_REG_QUEUE(q, reg));
    }
    void qwrite32(unsigned q, std::uint32_t reg, std::uint32_t value) {
        write32(TPU_REG_QUEUE(q, reg), value);
    }
    void qwrite64(unsigned q, std::uint32_t reg, std::uint64_t value) {
        write64(TPU_REG_QUEUE(q, reg), value);
    }

    // RESET and wait for STATUS.READY; false if it did not come back.
    bool reset();

  private:
    volatile std::uint8_t *regs_ = nullptr;
};

// The context table (one page, up to 256 contexts) and one context's 3-level page table.
class AddressSpace {
  public:
    AddressSpace(PagePool &pool, Page ctx_table, std::uint32_t ctx_id);

    // Maps the page containing va to the physical page pa with TPU_PTE_READ/WRITE perms.
    void map(std::uint64_t va, std::uint64_t pa, std::uint64_t perms);
    void unmap(std::uint64_t va);

  private:
    std::uint64_t *leaf(std::uint64_t va);

    PagePool &pool_;
    Page root_;
    std::vector<std::pair<std::uint64_t, Page>> tables_; // physical address -> its page
};

// One command queue with a ring and its completion records in one page each.
class Queue {
  public:
    static constexpr std::uint32_t kEntries = 64;

    Queue(Bar &bar, PagePool &pool, unsigned qid);

    // Programs RING_BASE, RING_SIZE, COMPL_BASE (queue disabled) and enables the queue.
    void start();
    // Writes entry with the next seqno at the tail (clearing its completion record) and rings
    // the doorbell; returns the seqno.
    std::uint64_t submit(tpu_ring_entry entry);
    // submit() of a RUN entry.
    std::uint64_t run(std::uint32_t ctx_id, std::uint64_t program_va, std::uint32_t bytes);
    // Waits until DONE_SEQ reaches seqno.
    bool wait(std::uint64_t seqno, double seconds = 60.0) const;
    tpu_completion completion(std::uint32_t slot) const;
    std::uint32_t slot_of(std::uint64_t seqno) const { return seqno_slot_.at(seqno); }
    // Forget the software tail after the card's HEAD and TAIL went back to 0.
    void restart_at_zero() { tail_ = 0; }

    Page ring;
    Page compl_records;
    const unsigned qid;

  private:
    Bar &bar_;
    std::uint32_t tail_ = 0;
    std::uint64_t next_seqno_ = 1;
    std::vector<std::uint32_t> seqno_slot_{0};
};

} // namespace raw
