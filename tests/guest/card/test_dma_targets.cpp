// SPDX-License-Identifier: MIT
// test_dma_targets.cpp - guest test, as root, without tpu.ko (issue 24, item 14): the card's DMA
// reaches guest RAM only. A page table entry pointing at the card's own BAR0 makes a program's
// DMA_OUT fail with TPU_ERR_BUS without writing the registers (the row written holds CONTROL = 0,
// the RESET magic and IRQ_MASK = 3), and its DMA_IN fail the same way; the card then runs a job.
#include "guest_programs.hpp"
#include "raw_card.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>

using namespace guest;

namespace {

constexpr std::uint32_t kCtx = 1;
constexpr std::uint64_t kProgramVa = 0x10000000;
constexpr std::uint64_t kSrcVa = 0x20000000;
constexpr std::uint64_t kRegsVa = 0x30000000; // the card's BAR0
constexpr std::uint32_t kRow = 64;            // bytes from CONTROL (0x40) to 0x7f

std::uint64_t bar0_phys() {
    std::ifstream resource(raw::unbound_card() + "/resource");
    std::uint64_t start = 0;
    resource >> std::hex >> start;
    REQUIRE(start != 0);
    return start;
}

struct Rig {
    raw::Bar bar{raw::unbound_card()};
    raw::PagePool pool{16};
    raw::Page ctx_table = pool.page();
    raw::AddressSpace space{pool, ctx_table, kCtx};
    raw::Page program = pool.page(), src = pool.page();
    raw::Queue queue{bar, pool, 0};

    Rig() {
        REQUIRE(bar.reset());
        space.map(kProgramVa, program.phys, TPU_PTE_READ);
        space.map(kSrcVa, src.phys, TPU_PTE_READ);
        space.map(kRegsVa, bar0_phys(), TPU_PTE_READ | TPU_PTE_WRITE);
        bar.write64(TPU_REG_CTX_TABLE, ctx_table.phys);
        bar.write32(TPU_REG_IRQ_MASK, 0);
        bar.write32(TPU_REG_CONTROL, TPU_CONTROL_ENABLE);
        queue.start();
    }
    ~Rig() { bar.reset(); }

    tpu_completion run(const tpurt::Program &p) {
        REQUIRE(p.size_bytes() <= TPU_PAGE_SIZE);
        std::memcpy(program.ptr, p.insns.data(), p.size_bytes());
        const std::uint64_t seqno = queue.run(kCtx, kProgramVa, std::uint32_t(p.size_bytes()));
        REQUIRE(queue.wait(seqno));
        return queue.completion(queue.slot_of(seqno));
    }

    // The registers the row would have changed, as the rig programmed them.
    void check_registers_untouched() const {
        CHECK(bar.read32(TPU_REG_CONTROL) == TPU_CONTROL_ENABLE);
        CHECK(bar.read32(TPU_REG_IRQ_MASK) == 0);
        CHECK(bar.read64(TPU_REG_CTX_TABLE) == ctx_table.phys); // a reset clears it
        CHECK(bar.qread32(0, TPU_QREG_STATUS) == TPU_QSTAT_ACTIVE);
    }
};

} // namespace

TEST_CASE("a DMA_OUT into the card's own registers fails and writes none", "[dma]") {
    Rig rig;
    auto *row = static_cast<std::uint32_t *>(rig.src.ptr);
    std::memset(row, 0, kRow);
    row[(TPU_REG_RESET - TPU_REG_CONTROL) / 4] = TPU_RESET_MAGIC;
    row[(TPU_REG_IRQ_MASK - TPU_REG_CONTROL) / 4] = TPU_IRQ_DONE | TPU_IRQ_ERROR;

    const tpu_completion c = rig.run(tpurt::ProgramBuilder()
                                         .dma_in(int8_rows(kSrcVa, 0, 1, kRow))
                                         .dma_out(int8_rows(kRegsVa + TPU_REG_CONTROL, 0, 1, kRow))
                                         .halt()
                                         .finish());
    CHECK(c.status == TPU_ERR_BUS);
    CHECK(c.fault_addr == kRegsVa + TPU_REG_CONTROL); // the device VA
    rig.check_registers_untouched();
    CHECK(rig.bar.read64(TPU_REG_CNT_JOBS_FAILED) == 1);
    CHECK(rig.run(halt_program()).status == TPU_ERR_NONE);
}

TEST_CASE("a DMA_IN from the card's own registers fails", "[dma]") {
    Rig rig;
    const tpu_completion c =
        rig.run(tpurt::ProgramBuilder().dma_in(int8_rows(kRegsVa, 0, 1, kRow)).halt().finish());
    CHECK(c.status == TPU_ERR_BUS);
    CHECK(c.fault_addr == kRegsVa);
    rig.check_registers_untouched();
    CHECK(rig.run(halt_program()).status == TPU_ERR_NONE);
}
