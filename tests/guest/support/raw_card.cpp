// SPDX-License-Identifier: MIT
// raw_card.cpp - the card driven from userspace without tpu.ko (see raw_card.hpp).
#include "raw_card.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <stdexcept>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace raw {
namespace {

constexpr std::uint64_t kPage = TPU_PAGE_SIZE;
constexpr std::uint16_t kCommandMemory = 1u << 1;
constexpr std::uint16_t kCommandMaster = 1u << 2;

[[noreturn]] void fail(const std::string &what) {
    throw std::runtime_error(what + ": " + std::strerror(errno));
}

std::string read_line(const std::string &path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

void write_text(const std::string &path, const std::string &text) {
    int fd = open(path.c_str(), O_WRONLY);
    if (fd < 0)
        fail("open " + path);
    ssize_t n = write(fd, text.data(), text.size());
    int err = errno;
    close(fd);
    errno = err;
    if (n != ssize_t(text.size()))
        fail("write '" + text + "' to " + path);
}

bool exists(const std::string &path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0;
}

std::string base_name(const std::string &path) {
    return path.substr(path.find_last_of('/') + 1);
}

// Sets memory decoding and bus mastering in the PCI command register.
void enable_bus_master(const std::string &card) {
    int fd = open((card + "/config").c_str(), O_RDWR);
    if (fd < 0)
        fail("open " + card + "/config");
    std::uint16_t command = 0;
    bool ok = pread(fd, &command, 2, 4) == 2;
    command |= kCommandMemory | kCommandMaster;
    ok = ok && pwrite(fd, &command, 2, 4) == 2;
    int err = errno;
    close(fd);
    errno = err;
    if (!ok)
        fail("PCI command register of " + card);
}

} // namespace

std::string find_card() {
    const std::string dir = "/sys/bus/pci/devices";
    DIR *d = opendir(dir.c_str());
    if (!d)
        fail("opendir " + dir);
    std::string found;
    while (dirent *e = readdir(d)) {
        std::string path = dir + "/" + e->d_name;
        if (e->d_name[0] != '.' && read_line(path + "/vendor") == "0x1234" &&
            read_line(path + "/device") == "0x7470")
            found = path;
    }
    closedir(d);
    if (found.empty())
        throw std::runtime_error("no TPU card (1234:7470) on the PCI bus");
    return found;
}

void unbind_driver(const std::string &card) {
    if (exists(card + "/driver"))
        write_text(card + "/driver/unbind", base_name(card));
}

const std::string &unbound_card() {
    static const std::string card = [] {
        std::string found = find_card();
        unbind_driver(found);
        return found;
    }();
    return card;
}

void bind_driver(const std::string &card) {
    write_text("/sys/bus/pci/drivers/tpu/bind", base_name(card));
    if (!poll_until([] { return exists("/dev/accel/accel0"); }, 10.0))
        throw std::runtime_error("/dev/accel/accel0 did not come back after binding tpu.ko");
}

PagePool::PagePool(std::size_t pages) : count_(pages), phys_(pages) {
    void *mem = mmap(nullptr, pages * kPage, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE | MAP_LOCKED, -1, 0);
    if (mem == MAP_FAILED)
        fail("mmap of locked DMA pages");
    base_ = static_cast<std::uint8_t *>(mem);
    int fd = open("/proc/self/pagemap", O_RDONLY);
    if (fd < 0)
        fail("open /proc/self/pagemap");
    for (std::size_t i = 0; i < pages; i++) {
        std::uint8_t *p = base_ + i * kPage;
        std::memset(p, 0, kPage);
        std::uint64_t entry = 0;
        off_t at = off_t(reinterpret_cast<std::uintptr_t>(p) / kPage * sizeof(entry));
        if (pread(fd, &entry, sizeof(entry), at) != sizeof(entry) || !(entry >> 63) ||
            (entry & ((1ull << 55) - 1)) == 0) {
            close(fd);
            throw std::runtime_error("no physical address in /proc/self/pagemap (not root?)");
        }
        phys_[i] = (entry & ((1ull << 55) - 1)) * kPage;
    }
    close(fd);
}

PagePool::~PagePool() {
    munmap(base_, count_ * kPage);
}

Page PagePool::page() {
    if (next_ == count_)
        throw std::runtime_error("PagePool: out of pages");
    Page p{base_ + next_ * kPage, phys_[next_]};
    next_++;
    return p;
}

Bar::Bar(const std::string &card) {
    enable_bus_master(card);
    int fd = open((card + "/resource0").c_str(), O_RDWR | O_SYNC);
    if (fd < 0)
        fail("open " + card + "/resource0");
    void *map = mmap(nullptr, TPU_BAR_REGS_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        fail("mmap of BAR0");
    regs_ = static_cast<volatile std::uint8_t *>(map);
}

Bar::~Bar() {
    munmap(const_cast<std::uint8_t *>(regs_), TPU_BAR_REGS_SIZE);
}

std::uint32_t Bar::read32(std::uint32_t reg) const {
    return *reinterpret_cast<volatile const std::uint32_t *>(regs_ + reg);
}

std::uint64_t Bar::read64(std::uint32_t reg) const {
    return *reinterpret_cast<volatile const std::uint64_t *>(regs_ + reg);
}

void Bar::write32(std::uint32_t reg, std::uint32_t value) {
    // Memory the card reads (rings, tables) is written before the register.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    *reinterpret_cast<volatile std::uint32_t *>(regs_ + reg) = value;
}

void Bar::write64(std::uint32_t reg, std::uint64_t value) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    *reinterpret_cast<volatile std::uint64_t *>(regs_ + reg) = value;
}

bool Bar::reset() {
    write32(TPU_REG_RESET, TPU_RESET_MAGIC);
    return poll_until([this] { return (read32(TPU_REG_STATUS) & TPU_STATUS_READY) != 0; }, 10.0);
}

AddressSpace::AddressSpace(PagePool &pool, Page ctx_table, std::uint32_t ctx_id)
    : pool_(pool), root_(pool.page()) {
    auto *entries = static_cast<tpu_ctx_entry *>(ctx_table.ptr);
    entries[ctx_id].reserved = 0;
    entries[ctx_id].pt_root = root_.phys | TPU_PTE_VALID;
    tables_.emplace_back(root_.phys, root_);
}

std::uint64_t *AddressSpace::leaf(std::uint64_t va) {
    Page table = root_;
    for (unsigned level = 0; level + 1 < TPU_PT_LEVELS; level++) {
        auto *entries = static_cast<std::uint64_t *>(table.ptr);
        std::uint64_t &pte = entries[TPU_PT_INDEX(va, level)];
        if (!(pte & TPU_PTE_VALID)) {
            Page next = pool_.page();
            tables_.emplace_back(next.phys, next);
            pte = next.phys | TPU_PTE_VALID;
        }
        for (const auto &[phys, page] : tables_)
            if (phys == (pte & TPU_PTE_ADDR_MASK))
                table = page;
    }
    return &static_cast<std::uint64_t *>(table.ptr)[TPU_PT_INDEX(va, TPU_PT_LEVELS - 1)];
}

void AddressSpace::map(std::uint64_t va, std::uint64_t pa, std::uint64_t perms) {
    *leaf(va) = (pa & TPU_PTE_ADDR_MASK) | perms | TPU_PTE_VALID;
}

void AddressSpace::unmap(std::uint64_t va) {
    *leaf(va) = 0;
}

Queue::Queue(Bar &bar, PagePool &pool, unsigned qid)
    : ring(pool.page()), compl_records(pool.page()), qid(qid), bar_(bar) {}

void Queue::start() {
    bar_.qwrite32(qid, TPU_QREG_CONTROL, 0);
    bar_.qwrite64(qid, TPU_QREG_RING_BASE, ring.phys);
    bar_.qwrite32(qid, TPU_QREG_RING_SIZE, kEntries);
    bar_.qwrite64(qid, TPU_QREG_COMPL_BASE, compl_records.phys);
    bar_.qwrite32(qid, TPU_QREG_CONTROL, TPU_QCTRL_ENABLE);
    tail_ = 0;
}

std::uint64_t Queue::submit(tpu_ring_entry entry) {
    const std::uint32_t slot = tail_;
    entry.seqno = next_seqno_++;
    seqno_slot_.push_back(slot);
    static_cast<tpu_ring_entry *>(ring.ptr)[slot] = entry;
    std::memset(static_cast<tpu_completion *>(compl_records.ptr) + slot, 0, sizeof(tpu_completion));
    tail_ = (tail_ + 1) % kEntries;
    bar_.qwrite32(qid, TPU_QREG_RING_TAIL, tail_);
    return entry.seqno;
}

std::uint64_t Queue::run(std::uint32_t ctx_id, std::uint64_t program_va, std::uint32_t bytes) {
    tpu_ring_entry e;
    std::memset(&e, 0, sizeof(e));
    e.opcode = TPU_RING_OP_RUN;
    e.ctx_id = ctx_id;
    e.program_addr = program_va;
    e.program_size = bytes;
    return submit(e);
}

bool Queue::wait(std::uint64_t seqno, double seconds) const {
    return poll_until([&] { return bar_.qread64(qid, TPU_QREG_DONE_SEQ) >= seqno; }, seconds);
}

tpu_completion Queue::completion(std::uint32_t slot) const {
    tpu_completion c;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    std::memcpy(&c, static_cast<const tpu_completion *>(compl_records.ptr) + slot, sizeof(c));
    return c;
}

} // namespace raw
