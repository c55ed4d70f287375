// SPDX-License-Identifier: MIT
// Randomized robustness: thousands of garbage and half-plausible programs, random program
// addresses and sizes, and garbage page tables. The engine must never crash, hang or touch
// memory outside what the callback grants (run under ASan/UBSan), and every job must end with
// a defined status and an error_pc inside the program.
#include <catch2/catch.hpp>

#include <random>

#include "tpu_test/card.hpp"

using namespace tpu::test;

namespace {

constexpr uint64_t kData = 0x100000;         // read-write
constexpr uint64_t kReadOnly = 0x200000;     // read-only
constexpr uint64_t kWriteOnly = 0x300000;    // write-only
constexpr uint64_t kBeyondMemory = 0x400000; // mapped to a page outside host memory
constexpr uint64_t kRegion = 64 * 1024;
constexpr uint32_t kUb = 32 * 1024;
constexpr uint32_t kAcc = 16 * 1024;

tpu_engine_config fuzz_config() {
    tpu_engine_config cfg = Card::default_config();
    cfg.mxu_rows = 16;
    cfg.mxu_cols = 16;
    cfg.ub_bytes = kUb;
    cfg.acc_bytes = kAcc;
    cfg.threads = 2;
    return cfg;
}

class Fuzzer {
  public:
    explicit Fuzzer(uint64_t seed) : rng_(seed) {}

    uint64_t any() { return rng_(); }
    uint64_t below(uint64_t n) { return rng_() % n; }
    bool chance(unsigned percent) { return below(100) < percent; }

    // Mostly small and non-zero, sometimes zero or anything.
    uint16_t count() {
        unsigned pick = unsigned(below(100));
        return uint16_t(pick < 90 ? 1 + below(40) : pick < 95 ? 0 : any());
    }
    uint32_t local_offset(uint32_t size) {
        return uint32_t(chance(85) ? below(size + 64) & ~3ull : any());
    }
    uint32_t stride() { return uint32_t(chance(80) ? below(256) & ~3ull : any()); }
    uint64_t host_addr() {
        switch (below(6)) {
        case 0:
            return kData + below(kRegion);
        case 1:
            return kReadOnly + below(kRegion);
        case 2:
            return kWriteOnly + below(kRegion);
        case 3:
            return kBeyondMemory + below(TPU_PAGE_SIZE);
        case 4:
            return any() & ((1ull << 40) - 1);
        default:
            return any();
        }
    }

    tpu_insn random_bytes() {
        tpu_insn i;
        for (__u64 &w : i.raw)
            w = any();
        return i;
    }

    tpu_insn random_dma() {
        uint8_t opcode = chance(50) ? TPU_OP_DMA_IN : TPU_OP_DMA_OUT;
        uint16_t flags = 0;
        if (opcode == TPU_OP_DMA_OUT && chance(50))
            flags = TPU_F_SRC_ACC;
        if (chance(5))
            flags = uint16_t(any());
        uint8_t dtype = uint8_t(chance(95) ? below(4) : any());
        tpu_insn i = dma(opcode, dtype, flags, count(), count(), host_addr(), stride(),
                         local_offset(flags & TPU_F_SRC_ACC ? kAcc : kUb), stride());
        if (chance(3))
            i.dma.reserved = uint32_t(any());
        return i;
    }

    uint8_t mxu_dtype() {
        static constexpr uint8_t kTypes[] = {TPU_DT_INT8, TPU_DT_BF16, TPU_DT_FP32};
        return chance(90) ? kTypes[below(3)] : uint8_t(any());
    }
    uint16_t tile_dim() { return uint16_t(chance(95) ? 1 + below(17) : any()); }

    tpu_insn random_load_w() {
        tpu_insn i = load_w(mxu_dtype(), tile_dim(), tile_dim(), local_offset(kUb), stride());
        if (chance(20))
            i.mxu.flags |= TPU_F_W_TRANSPOSE;
        if (chance(20)) { // from host memory: the DMA layout
            i.mxu.flags |= TPU_F_W_HOST;
            i.dma.host_addr = host_addr();
            i.dma.host_stride = stride();
            i.dma.local_addr = 0;
            i.dma.local_stride = 0;
        }
        if (chance(5))
            i.mxu.acc_stride = uint32_t(any());
        return i;
    }

    tpu_insn random_matmul(uint8_t dtype, uint16_t k) {
        uint16_t flags = uint16_t(chance(90) ? below(2) : any());
        tpu_insn i = matmul(dtype, count(), k, local_offset(kUb), stride(), local_offset(kAcc),
                            stride(), flags);
        if (chance(3))
            i.mxu.reserved = uint16_t(any());
        if (chance(10)) {
            i.mxu.row_group = uint16_t(below(8));
            i.mxu.group_stride = stride();
        }
        return i;
    }

    // ACTIVATE, VECTOR, REDUCE, POOL, TRANSPOSE, SYNC or TIMESTAMP with plausible fields.
    tpu_insn random_vpu() {
        tpu_insn i{};
        i.hdr.opcode = uint8_t(TPU_OP_ACTIVATE + below(7));
        i.hdr.dtype = uint8_t(chance(95) ? below(4) : any());
        i.hdr.flags = uint16_t(chance(90) ? below(7) : any());
        switch (i.hdr.opcode) {
        case TPU_OP_ACTIVATE:
            i.act.rows = count();
            i.act.cols = count();
            i.act.acc_addr = local_offset(kAcc);
            i.act.acc_stride = stride();
            i.act.dst_addr = local_offset(kUb);
            i.act.dst_stride = stride();
            i.act.flags |= uint16_t(below(4) << 4);
            i.act.bias_addr = i.act.flags & TPU_F_ACT_BIAS ? local_offset(kUb) : 0;
            i.act.scale = uint32_t(any());
            break;
        case TPU_OP_POOL:
            i.pool.rows = uint16_t(1 + below(8));
            i.pool.cols = uint16_t(1 + below(8));
            i.pool.channels = uint16_t(1 + below(4));
            i.pool.win_h = uint8_t(below(4));
            i.pool.win_w = uint8_t(1 + below(3));
            i.pool.stride_h = uint8_t(1 + below(3));
            i.pool.stride_w = uint8_t(below(3));
            i.pool.src_addr = local_offset(kUb);
            i.pool.src_row_stride = stride();
            i.pool.dst_addr = local_offset(kUb);
            i.pool.dst_row_stride = stride();
            break;
        case TPU_OP_SYNC:
            i.hdr.dtype = 0;
            i.hdr.flags = 0;
            break;
        case TPU_OP_TIMESTAMP:
            i.hdr.dtype = 0;
            i.hdr.flags = 0;
            i.ts.tag = uint32_t(any());
            i.ts.host_addr = host_addr() & ~7ull;
            break;
        default: // VECTOR, REDUCE, TRANSPOSE
            i.vec.rows = count();
            i.vec.cols = count();
            i.vec.a_addr = local_offset(kUb);
            i.vec.a_stride = stride();
            if (i.hdr.opcode == TPU_OP_VECTOR || chance(5)) {
                i.vec.b_addr = local_offset(kUb);
                i.vec.b_stride = chance(20) ? 0 : stride();
            }
            i.vec.dst_addr = local_offset(kUb);
            i.vec.dst_stride = stride();
            break;
        }
        if (chance(3))
            i.raw[below(4)] ^= any();
        return i;
    }

    tpu_insn random_plain() {
        tpu_insn i = chance(50) ? nop() : halt();
        if (chance(5))
            i.raw[below(4)] |= any() << 8;
        return i;
    }

    // A program of random bytes, near-valid instructions (valid opcodes with plausible and
    // occasionally wild fields) and LOAD_W + MATMUL pairs that agree on dtype and K, so the
    // fuzzer gets past the first checks and really moves data and multiplies.
    Program program() {
        Program p;
        uint64_t length = 1 + below(32);
        while (p.size() < length) {
            unsigned pick = unsigned(below(100));
            if (pick < 10) {
                p.push_back(random_bytes());
            } else if (pick < 45) {
                p.push_back(random_dma());
            } else if (pick < 80) {
                tpu_insn w = random_load_w();
                p.push_back(w);
                p.push_back(random_matmul(w.mxu.dtype, chance(90) ? w.mxu.rows : tile_dim()));
            } else if (pick < 85) {
                p.push_back(random_matmul(mxu_dtype(), tile_dim()));
            } else if (pick < 95) {
                p.push_back(random_vpu());
            } else {
                p.push_back(random_plain());
            }
        }
        return p;
    }

  private:
    std::mt19937_64 rng_;
};

struct Rig {
    HostMemory mem{64ull << 20};
    Card card{mem, fuzz_config()};
    AddressSpace space = card.address_space(0);

    Rig() {
        space.map(kData, kRegion, kReadWrite);
        space.map(kReadOnly, kRegion, kRead);
        space.map(kWriteOnly, kRegion, kWrite);
        space.map_phys(kBeyondMemory, mem.size() + TPU_PAGE_SIZE, kReadWrite);
    }
};

void check_sane(const tpu_job_result &r, uint64_t insns) {
    REQUIRE(r.status < TPU_ERR_COUNT);
    if (r.status == TPU_ERR_NONE) {
        REQUIRE(r.error_pc == 0);
        REQUIRE(r.fault_addr == 0);
    } else {
        REQUIRE(r.error_pc <= insns);
    }
    REQUIRE(r.mmu_faults == (r.status == TPU_ERR_MMU_FAULT ? 1u : 0u));
    REQUIRE(r.mxu_busy_cycles <= r.cycles);
}

} // namespace

TEST_CASE("random programs never crash the engine", "[robustness]") {
    Rig rig;
    Fuzzer fuzz(20240601);
    unsigned statuses[TPU_ERR_COUNT] = {};
    for (int iter = 0; iter < 10000; iter++) {
        Program p = fuzz.program();
        tpu_job_result r = rig.card.run(rig.space, p);
        check_sane(r, p.size());
        statuses[r.status]++;
    }
    // The plausible instructions reach deep enough to succeed and to fail in many ways.
    CHECK(statuses[TPU_ERR_NONE] > 0);
    CHECK(statuses[TPU_ERR_BAD_OPERAND] > 0);
    CHECK(statuses[TPU_ERR_BAD_OPCODE] > 0);
    CHECK(statuses[TPU_ERR_UB_RANGE] > 0);
    CHECK(statuses[TPU_ERR_MMU_FAULT] > 0);
    CHECK(statuses[TPU_ERR_ACC_RANGE] > 0);
    CHECK(statuses[TPU_ERR_BUS] > 0);
    CHECK(statuses[TPU_ERR_NO_WEIGHTS] > 0);
}

TEST_CASE("random program addresses, sizes and contexts are handled", "[robustness]") {
    Rig rig;
    Fuzzer fuzz(77);
    Program p = fuzz.program();
    rig.space.map(Card::kProgramVa, p.size() * sizeof(tpu_insn), kRead);
    rig.space.write(Card::kProgramVa, p.data(), p.size() * sizeof(tpu_insn));
    for (int iter = 0; iter < 5000; iter++) {
        uint64_t addr = fuzz.chance(50) ? Card::kProgramVa + fuzz.below(4096) : fuzz.host_addr();
        uint32_t size = uint32_t(fuzz.chance(70) ? fuzz.below(64) * 32 : fuzz.any());
        uint32_t ctx = uint32_t(fuzz.chance(80) ? 0 : fuzz.any());
        tpu_job_result r = rig.card.run(ctx, addr, size);
        check_sane(r, size / 32);
    }
}

TEST_CASE("garbage page tables never crash the engine", "[robustness]") {
    Fuzzer fuzz(99);
    for (int round = 0; round < 20; round++) {
        Rig rig;
        // Point the level-0 entry of a VA range at a page of random entries, some of them
        // valid and pointing anywhere in (or beyond) host memory. Leaves taken from it are not
        // writable, so DMA_OUT cannot scribble over the rig's own tables and programs.
        uint64_t table = rig.mem.alloc_page();
        for (int e = 0; e < TPU_PT_ENTRIES; e++) {
            uint64_t pte = fuzz.any() & (fuzz.chance(50) ? (rig.mem.size() - 1) : ~0ull);
            pte &= ~TPU_PTE_WRITE;
            rig.mem.write(table + e * 8, &pte, 8);
        }
        const uint64_t garbage_va = 1ull << 35;
        uint64_t l0 = table | TPU_PTE_VALID;
        rig.mem.write(rig.space.root() + TPU_PT_INDEX(garbage_va, 0) * 8, &l0, 8);

        for (int iter = 0; iter < 200; iter++) {
            Program p;
            for (int i = 0; i < 8; i++) {
                uint64_t va = garbage_va + (fuzz.any() & ((1ull << 30) - 1));
                p.push_back(fuzz.chance(50)
                                ? dma_in(TPU_DT_INT8, uint16_t(1 + fuzz.below(4)),
                                         uint16_t(1 + fuzz.below(5000)), va, 4096, 0, 0)
                                : dma_out(TPU_DT_INT8, uint16_t(1 + fuzz.below(4)),
                                          uint16_t(1 + fuzz.below(5000)), va, 4096, 0, 0));
            }
            check_sane(rig.card.run(rig.space, p), p.size());
        }
    }
}
