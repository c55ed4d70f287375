// SPDX-License-Identifier: MIT
// Device MMU and DMA: page-crossing transfers, unmapped and not-permitted accesses (MMU_FAULT
// with the exact device VA), program fetch through the MMU, context checks (BAD_CTX), failed
// physical accesses (BUS), isolation between contexts and remapping after TLB invalidation.
#include <catch2/catch.hpp>

#include <numeric>

#include "tpu_test/card.hpp"

using namespace tpu::test;

namespace {

constexpr uint64_t kPage = TPU_PAGE_SIZE;
constexpr uint64_t kBuf = 0x200000;

std::vector<uint8_t> pattern(uint64_t bytes, uint8_t seed) {
    std::vector<uint8_t> v(bytes);
    for (uint64_t i = 0; i < bytes; i++)
        v[i] = uint8_t(i * 7 + seed + (i >> 8));
    return v;
}

tpu_engine_config small_config() {
    tpu_engine_config cfg = Card::default_config();
    cfg.ub_bytes = 1u << 20;
    cfg.acc_bytes = 1u << 16;
    cfg.threads = 1;
    return cfg;
}

} // namespace

TEST_CASE("DMA crosses page boundaries with strided rows on scattered pages", "[mmu]") {
    HostMemory mem;
    Card card(mem, small_config());
    AddressSpace space = card.address_space(1);
    // 7 rows of 3000 bytes, 5000 bytes apart, starting 100 bytes before a page end.
    const uint64_t src = kBuf + kPage - 100, dst = kBuf + 16 * kPage + 33;
    space.map(src, 7 * 5000, kRead);
    space.map(dst, 7 * 4500, kWrite);
    CHECK(space.translate(src + 100) != space.translate(src) + 100); // physically scattered
    std::vector<uint8_t> data = pattern(7 * 5000, 3);
    space.write(src, data.data(), data.size());

    Program p{dma_in(TPU_DT_INT8, 7, 3000, src, 5000, 64, 3000),
              dma_out(TPU_DT_INT8, 7, 3000, dst, 4500, 64, 3000), halt()};
    tpu_job_result r = card.run(space, p);
    REQUIRE(r.status == TPU_ERR_NONE);
    CHECK(r.dma_read_bytes == 21000);
    CHECK(r.dma_write_bytes == 21000);
    for (int row = 0; row < 7; row++) {
        std::vector<uint8_t> got(3000);
        space.read(dst + row * 4500, got.data(), got.size());
        CHECK(std::equal(got.begin(), got.end(), data.begin() + row * 5000));
    }
}

TEST_CASE("short strided rows move the same through mapped pages and the memory callback",
          "[mmu]") {
    // 2,000 rows of 20 bytes, 52 apart on the host (a permute's rows of a few elements), in and
    // back out, over scattered pages: through pages mapped once for all their rows, or a
    // callback per row. A hole in the destination: the rows before it written, the fault at its
    // first byte, either way.
    const bool mapped = GENERATE(true, false);
    CAPTURE(mapped);
    HostMemory mem;
    Card card(mem, small_config());
    card.use_phys_map(mapped);
    AddressSpace space = card.address_space(1);
    const uint32_t rows = 2000, row = 20, stride = 52;
    const uint64_t src = kBuf + kPage - 30, dst = kBuf + 64 * kPage + 6;
    space.map(src, rows * stride, kRead);
    space.map(dst, rows * stride, kReadWrite);
    const std::vector<uint8_t> data = pattern(rows * stride, 9);
    space.write(src, data.data(), data.size());
    const std::vector<uint8_t> zeros(rows * stride, 0);
    space.write(dst, zeros.data(), zeros.size());
    const Program p{dma_in(TPU_DT_INT8, rows, row, src, stride, 0, row),
                    dma_out(TPU_DT_INT8, rows, row, dst, stride, 0, row), halt()};
    SECTION("in and out") {
        const tpu_job_result r = card.run(space, p);
        REQUIRE(r.status == TPU_ERR_NONE);
        std::vector<uint8_t> got(rows * stride);
        space.read(dst, got.data(), got.size());
        for (uint32_t i = 0; i < rows * stride; i++)
            REQUIRE(got[i] == (i % stride < row ? data[i] : 0));
    }
    SECTION("a hole in the destination") {
        const uint64_t hole = (dst + 10 * kPage) & ~(kPage - 1);
        space.unmap(hole, kPage);
        const tpu_job_result r = card.run(space, p);
        CHECK(r.status == TPU_ERR_MMU_FAULT);
        CHECK(r.error_pc == 1);
        // The first row byte at or after the hole's start: rows are 52 apart from dst.
        const uint64_t first = hole - dst;
        const uint64_t r0 = first / stride;
        const uint64_t fault = first % stride < row ? hole : dst + (r0 + 1) * stride;
        CHECK(r.fault_addr == fault);
        std::vector<uint8_t> got(hole - dst);
        space.read(dst, got.data(), got.size());
        for (uint64_t i = 0; i < got.size(); i++)
            REQUIRE(got[i] == (i % stride < row ? data[i] : 0));
    }
}

TEST_CASE("rows contiguous on both sides move as one span, faulting where row by row would",
          "[mmu]") {
    HostMemory mem;
    Card card(mem, small_config());
    AddressSpace space = card.address_space(1);
    // 300 rows of 48 bytes, dense on both sides, from 40 bytes before a page end: 14,400 bytes
    // over four scattered pages, and rows straddling every page boundary.
    const uint64_t src = kBuf + kPage - 40, dst = kBuf + 16 * kPage + 8;
    space.map(src, 300 * 48, kRead);
    space.map(dst, 300 * 48, kReadWrite);
    const std::vector<uint8_t> data = pattern(300 * 48, 5);
    space.write(src, data.data(), data.size());
    SECTION("in and out") {
        const Program p{dma_in(TPU_DT_INT8, 300, 48, src, 48, 96, 48),
                        dma_out(TPU_DT_INT8, 300, 48, dst, 48, 96, 48), halt()};
        const tpu_job_result r = card.run(space, p);
        REQUIRE(r.status == TPU_ERR_NONE);
        CHECK(r.dma_read_bytes == 300 * 48);
        CHECK(r.dma_write_bytes == 300 * 48);
        std::vector<uint8_t> got(data.size());
        space.read(dst, got.data(), got.size());
        CHECK(got == data);
    }
    SECTION("a hole: the bytes before it written, the fault at its first byte") {
        const uint64_t hole = (dst + 2 * kPage) & ~(kPage - 1);
        space.unmap(hole, kPage);
        const std::vector<uint8_t> zeros(data.size(), 0);
        space.write(dst, zeros.data(), hole - dst);
        const Program p{dma_in(TPU_DT_INT8, 300, 48, src, 48, 96, 48),
                        dma_out(TPU_DT_INT8, 300, 48, dst, 48, 96, 48), halt()};
        const tpu_job_result r = card.run(space, p);
        CHECK(r.status == TPU_ERR_MMU_FAULT);
        CHECK(r.error_pc == 1);
        CHECK(r.fault_addr == hole);
        std::vector<uint8_t> got(hole - dst);
        space.read(dst, got.data(), got.size());
        CHECK(std::equal(got.begin(), got.end(), data.begin()));
    }
}

TEST_CASE("LOAD_W from host memory faults at the first unmapped byte, dense rows or not", "[mmu]") {
    // A 64 x 64 fp32 tile (16 KiB) from 100 bytes before a page end, the page after the next
    // one unmapped: dense rows are one read, strided ones a read per row; both fault at the
    // hole's first byte, and a MATMUL after it never runs.
    HostMemory mem;
    Card card(mem, small_config());
    AddressSpace space = card.address_space(1);
    const bool dense = GENERATE(false, true);
    const uint32_t row = 64 * 4, stride = dense ? row : row + 12;
    const uint64_t src = kBuf + kPage - 100;
    space.map(kBuf, 8 * kPage, kRead);
    const uint64_t hole = kBuf + 3 * kPage;
    space.unmap(hole, kPage);
    const Program p{load_w_host(TPU_DT_FP32, 64, 64, src, stride),
                    matmul(TPU_DT_FP32, 1, 64, 0, 256, 0, 256), halt()};
    const tpu_job_result r = card.run(space, p);
    CHECK(r.status == TPU_ERR_MMU_FAULT);
    CHECK(r.error_pc == 0);
    CHECK(r.fault_addr == hole);
}

TEST_CASE("an unmapped device VA ends the job with MMU_FAULT at that address", "[mmu]") {
    HostMemory mem;
    Card card(mem, small_config());
    AddressSpace space = card.address_space(1);
    space.map(kBuf, 2 * kPage, kReadWrite);

    SECTION("DMA_IN running off the mapping") {
        Program p{nop(), dma_in(TPU_DT_INT8, 1, 3 * kPage, kBuf, 0, 0, 0), halt()};
        tpu_job_result r = card.run(space, p);
        CHECK(r.status == TPU_ERR_MMU_FAULT);
        CHECK(r.error_pc == 1);
        CHECK(r.fault_addr == kBuf + 2 * kPage);
        CHECK(r.mmu_faults == 1);
        CHECK(r.dma_read_bytes == 0);
    }
    SECTION("DMA_OUT to a hole in the middle of the rows") {
        space.unmap(kBuf + kPage, kPage);
        Program p{dma_out(TPU_DT_INT32, 4, 16, kBuf, 2048, 0, 64), halt()};
        tpu_job_result r = card.run(space, p);
        CHECK(r.status == TPU_ERR_MMU_FAULT);
        CHECK(r.error_pc == 0);
        CHECK(r.fault_addr == kBuf + kPage);
    }
    SECTION("an address beyond the 39-bit VA space") {
        const uint64_t far = 1ull << 39;
        Program p{dma_in(TPU_DT_INT8, 1, 8, far, 0, 0, 0)};
        tpu_job_result r = card.run(space, p);
        CHECK(r.status == TPU_ERR_MMU_FAULT);
        CHECK(r.fault_addr == far);
    }
    SECTION("a host address whose rows would wrap around 2^64") {
        const uint64_t top = ~0ull - 100;
        Program p{dma_in(TPU_DT_INT8, 4, 8, top, 0x10000000, 0, 8)};
        tpu_job_result r = card.run(space, p);
        CHECK(r.status == TPU_ERR_MMU_FAULT);
        CHECK(r.fault_addr == top);
    }
}

TEST_CASE("permissions are enforced per page", "[mmu]") {
    HostMemory mem;
    Card card(mem, small_config());
    AddressSpace space = card.address_space(2);
    space.map(kBuf, kPage, kReadWrite);
    space.map(kBuf + kPage, kPage, kRead);
    space.map(kBuf + 2 * kPage, kPage, kWrite);

    SECTION("DMA_OUT into a read-only page") {
        Program p{dma_out(TPU_DT_INT8, 1, 2 * kPage, kBuf, 0, 0, 0), halt()};
        tpu_job_result r = card.run(space, p);
        CHECK(r.status == TPU_ERR_MMU_FAULT);
        CHECK(r.fault_addr == kBuf + kPage);
    }
    SECTION("DMA_IN from a write-only page") {
        Program p{dma_in(TPU_DT_INT8, 1, 16, kBuf + 2 * kPage + 8, 0, 0, 0), halt()};
        tpu_job_result r = card.run(space, p);
        CHECK(r.status == TPU_ERR_MMU_FAULT);
        CHECK(r.fault_addr == kBuf + 2 * kPage + 8);
    }
    SECTION("program fetch needs READ") {
        Program p{halt()};
        space.write(kBuf + 2 * kPage, p.data(), sizeof(tpu_insn));
        tpu_job_result r = card.run(space.ctx_id(), kBuf + 2 * kPage, sizeof(tpu_insn));
        CHECK(r.status == TPU_ERR_MMU_FAULT);
        CHECK(r.error_pc == 0);
        CHECK(r.fault_addr == kBuf + 2 * kPage);
    }
}

TEST_CASE("programs are fetched page by page through the MMU", "[mmu]") {
    HostMemory mem;
    Card card(mem, small_config());
    AddressSpace space = card.address_space(1);
    const uint64_t prog = 0x400000;
    const uint32_t per_page = kPage / sizeof(tpu_insn);

    SECTION("execution reaches an unmapped page") {
        Program p(per_page + 2, nop());
        space.map(prog, 2 * kPage, kRead);
        space.write(prog, p.data(), p.size() * sizeof(tpu_insn));
        space.unmap(prog + kPage, kPage);
        tpu_job_result r = card.run(1, prog, uint32_t(p.size() * sizeof(tpu_insn)));
        CHECK(r.status == TPU_ERR_MMU_FAULT);
        CHECK(r.error_pc == per_page);
        CHECK(r.fault_addr == prog + kPage);
        CHECK(r.cycles == per_page); // the NOPs before it ran
    }
    SECTION("HALT before an unmapped page ends the program cleanly") {
        Program p(per_page + 2, nop());
        p[per_page - 1] = halt();
        space.map(prog, kPage, kRead);
        space.write(prog, p.data(), kPage);
        tpu_job_result r = card.run(1, prog, uint32_t(p.size() * sizeof(tpu_insn)));
        CHECK(r.status == TPU_ERR_NONE);
    }
    SECTION("instructions straddling a page boundary") {
        Program p(40, nop());
        p.back() = halt();
        const uint64_t start = prog + kPage - 16;
        space.map(start, p.size() * sizeof(tpu_insn), kRead);
        space.write(start, p.data(), p.size() * sizeof(tpu_insn));
        tpu_job_result r = card.run(1, start, uint32_t(p.size() * sizeof(tpu_insn)));
        CHECK(r.status == TPU_ERR_NONE);
        CHECK(r.cycles == 40);
    }
}

TEST_CASE("context ids and entries are checked", "[mmu]") {
    HostMemory mem;
    Card card(mem, small_config(), 8);
    AddressSpace space = card.address_space(1);
    Program p{halt()};
    REQUIRE(card.run(space, p).status == TPU_ERR_NONE);

    SECTION("id beyond the table") {
        CHECK(card.run(8, Card::kProgramVa, 32).status == TPU_ERR_BAD_CTX);
    }
    SECTION("invalid entry") {
        CHECK(card.run(2, Card::kProgramVa, 32).status == TPU_ERR_BAD_CTX);
    }
    SECTION("reserved bits set") {
        card.contexts().set(1, space.root() | TPU_PTE_VALID, 1);
        CHECK(card.run(1, Card::kProgramVa, 32).status == TPU_ERR_BAD_CTX);
    }
    SECTION("no context table") {
        tpu_engine_set_ctx_table(card.engine(), 0, 0);
        CHECK(card.run(1, Card::kProgramVa, 32).status == TPU_ERR_BAD_CTX);
    }
    SECTION("context table outside host memory") {
        tpu_engine_set_ctx_table(card.engine(), mem.size() - 16, 8);
        tpu_job_result r = card.run(1, Card::kProgramVa, 32);
        CHECK(r.status == TPU_ERR_BUS);
        CHECK(r.error_pc == 0);
    }
}

TEST_CASE("failed physical accesses end the job with BUS", "[mmu]") {
    HostMemory mem(64ull << 20);
    Card card(mem, small_config());
    AddressSpace space = card.address_space(1);

    SECTION("a page mapped beyond host memory") {
        space.map_phys(kBuf, mem.size() + kPage, kReadWrite);
        tpu_job_result r = card.run(space, Program{dma_in(TPU_DT_INT8, 1, 4, kBuf + 12, 0, 0, 0)});
        CHECK(r.status == TPU_ERR_BUS);
        CHECK(r.fault_addr == kBuf + 12);
    }
    SECTION("a page-table pointer beyond host memory") {
        space.map(kBuf, kPage, kRead);
        uint64_t bogus_table = (mem.size() + 16 * kPage) | TPU_PTE_VALID;
        mem.write(space.root() + TPU_PT_INDEX(kBuf, 0) * 8, &bogus_table, 8);
        tpu_job_result r = card.run(1, kBuf, 32);
        CHECK(r.status == TPU_ERR_BUS);
        CHECK(r.fault_addr == kBuf);
    }
}

TEST_CASE("contexts are isolated and remapping takes effect after invalidation", "[mmu]") {
    HostMemory mem;
    Card card(mem, small_config());
    AddressSpace one = card.address_space(1);
    AddressSpace two = card.address_space(2);
    std::vector<uint8_t> secret = pattern(64, 1);
    one.map(kBuf, kPage, kReadWrite);
    one.write(kBuf, secret.data(), secret.size());
    two.map(kBuf + kPage, kPage, kWrite);

    // Context 2 copies kBuf (not mapped in its space) to its own page: must fault.
    Program copy{dma_in(TPU_DT_INT8, 1, 64, kBuf, 0, 0, 0),
                 dma_out(TPU_DT_INT8, 1, 64, kBuf + kPage, 0, 0, 0), halt()};
    tpu_job_result r = card.run(two, copy);
    CHECK(r.status == TPU_ERR_MMU_FAULT);
    CHECK(r.fault_addr == kBuf);

    // Once context 2 maps kBuf itself it sees its own (zeroed) page, not context 1's data.
    two.map(kBuf, kPage, kRead);
    REQUIRE(card.run(two, copy).status == TPU_ERR_NONE);
    CHECK(two.read_vector<uint8_t>(kBuf + kPage, 64) == std::vector<uint8_t>(64, 0));

    // Repointing the page between jobs takes effect in the next job once the host invalidates
    // the context's cached translations (tlb_test.cpp).
    two.map_phys(kBuf, one.translate(kBuf), kRead);
    tpu_engine_tlb_invalidate(card.engine(), two.ctx_id());
    REQUIRE(card.run(two, copy).status == TPU_ERR_NONE);
    CHECK(two.read_vector<uint8_t>(kBuf + kPage, 64) == secret);
}
