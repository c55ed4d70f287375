// SPDX-License-Identifier: MIT
// K-chain fusion in fast mode (executor_chain.cpp): runs of LOAD_W / MATMUL pairs accumulating
// into the same rows are computed as one MATMUL, which must be invisible. Random chains on a
// small card against the cycle-accurate model (which never fuses): results, counters, cycles
// and final state identical; chains on a 128 x 128 card against the same program with a NOP
// between the pairs (which stops fusion); faults inside a chain, a chain running into an
// unmapped program page, the weights left loaded after a chain, and chains that must not fuse.
// Sequences (executor_sequence.cpp): a convolution's taps over one to three channels, walked
// block of rows by block of rows, against the same program pair by pair.
#include <catch2/catch.hpp>

#include <bit>
#include <cstring>
#include <random>
#include <vector>

#include "tpu_test/card.hpp"
#include "tpu_test/equivalence.hpp"
#include "tpu_test/program.hpp"
#include "tpu_test/random_data.hpp"

using namespace tpu::test;

namespace {

constexpr uint8_t kDtypes[] = {TPU_DT_INT8, TPU_DT_BF16, TPU_DT_FP32};

uint32_t align_down(uint32_t v, uint32_t a) {
    return v / a * a;
}

// One chain of LOAD_W / MATMUL pairs over the same accumulator rows.
struct Chain {
    uint8_t dtype = TPU_DT_INT8;
    uint32_t m = 1, n = 1;
    std::vector<uint32_t> k; // per link
    bool scattered = false;  // activations of each link in a block of their own
    bool transposed = false; // LOAD_W with TPU_F_W_TRANSPOSE
    bool accumulate_first = false;
    uint16_t row_group = 0;
    uint32_t acc_addr = 0, acc_stride = 0;
};

// Small card of ProgramLimits{} (8 x 8 array, 16 KiB UB and ACC): activations in the first
// half of the UB, link i's weights at 8 KiB + 1 KiB * i.
constexpr uint32_t kWeightsAt = 8192;
constexpr uint32_t kBlock = 1024;

// Appends the chain's instructions.
void push_chain(const Chain &c, std::mt19937_64 &rng, Program &p) {
    const uint32_t es = dtype_bytes(c.dtype);
    uint32_t depth = 0;
    for (uint32_t k : c.k)
        depth += k;
    const uint32_t stride = depth * es + es * uint32_t(rng() % 3);
    uint32_t k0 = 0;
    for (size_t i = 0; i < c.k.size(); i++) {
        const uint32_t k = c.k[i];
        const uint32_t row = (c.transposed ? k : c.n) * es;
        p.push_back(load_w(c.dtype, uint16_t(k), uint16_t(c.n), kWeightsAt + kBlock * uint32_t(i),
                           row + es * uint32_t(rng() % 2), c.transposed ? TPU_F_W_TRANSPOSE : 0));
        const uint16_t flags = i > 0 || c.accumulate_first ? TPU_F_ACCUMULATE : 0;
        tpu_insn mm;
        if (c.scattered) {
            const uint32_t s = k * es + es * uint32_t(rng() % 3);
            mm = matmul(c.dtype, uint16_t(c.m), uint16_t(k), kBlock * uint32_t(i), s, c.acc_addr,
                        c.acc_stride, flags);
            if (c.row_group) {
                mm.mxu.row_group = c.row_group;
                // Groups as far apart as plain rows, or overlapping by one row.
                mm.mxu.group_stride = (c.row_group - rng() % 2) * s;
            }
        } else {
            mm = matmul(c.dtype, uint16_t(c.m), uint16_t(k), k0 * es, stride, c.acc_addr,
                        c.acc_stride, flags);
        }
        p.push_back(mm);
        k0 += k;
    }
}

Chain random_chain(std::mt19937_64 &rng) {
    Chain c;
    c.dtype = kDtypes[rng() % 3];
    c.n = 1 + uint32_t(rng() % 8);
    c.m = 1 + uint32_t(rng() % 24);
    const uint32_t links = 2 + uint32_t(rng() % 7);
    for (uint32_t i = 0; i < links; i++)
        c.k.push_back(1 + uint32_t(rng() % 8));
    c.scattered = rng() % 2;
    c.transposed = rng() % 4 == 0;
    c.accumulate_first = rng() % 2;
    if (c.scattered && rng() % 3 == 0)
        c.row_group = uint16_t(1 + rng() % c.m);
    // Mostly separate rows; sometimes overlapping ones (never fused).
    c.acc_stride = rng() % 5 == 0 && c.n > 1 ? 4 * uint32_t(1 + rng() % (c.n - 1))
                                             : 4 * (c.n + uint32_t(rng() % 3));
    const uint32_t span = (c.m - 1) * c.acc_stride + 4 * c.n;
    c.acc_addr = align_down(uint32_t(rng() % (16384 - span + 1)), 4);
    return c;
}

// The whole UB from the random input, chains, then the final UB and ACC dumped.
Program chain_program(uint64_t seed, const ProgramLimits &lim) {
    std::mt19937_64 rng(seed);
    Program p;
    p.push_back(dma_in(TPU_DT_INT8, 1, uint16_t(lim.ub_bytes), lim.input_va, lim.ub_bytes, 0,
                       lim.ub_bytes));
    const uint32_t chains = 1 + uint32_t(rng() % 3);
    for (uint32_t i = 0; i < chains; i++) {
        const Chain c = random_chain(rng);
        push_chain(c, rng, p);
        // Sometimes another MATMUL on the weights the chain left loaded.
        if (rng() % 2)
            p.push_back(matmul(c.dtype, 3, uint16_t(c.k.back()), 0, 64, 16384 - 128, 32));
    }
    push_state_dump(p, lim);
    return p;
}

// A fast-mode card with 128 x 128 array and host regions for inputs and outputs.
struct BigCard {
    static constexpr uint64_t kInput = 0x10000000;
    static constexpr uint64_t kOutput = 0x20000000;
    static constexpr uint64_t kUnmapped = 0x30000000;
    static constexpr uint32_t kAccBytes = 8u << 20;

    explicit BigCard(uint32_t threads) : card(mem, config(threads)), space(card.address_space(1)) {
        space.map(kInput, 16u << 20, kRead);
        space.map(kOutput, kAccBytes, kReadWrite);
    }

    static tpu_engine_config config(uint32_t threads) {
        tpu_engine_config cfg = Card::default_config();
        cfg.threads = threads;
        return cfg;
    }

    struct Output {
        tpu_job_result result;
        std::vector<uint8_t> acc;
    };

    // Runs p, which dumps its accumulators to kOutput; returns the result and those bytes.
    Output run(const Program &p, uint64_t acc_bytes) {
        Output out;
        std::vector<uint8_t> zeros(acc_bytes);
        space.write(kOutput, zeros.data(), acc_bytes);
        out.result = card.run(space, p);
        out.acc.resize(acc_bytes);
        space.read(kOutput, out.acc.data(), acc_bytes);
        return out;
    }

    HostMemory mem{512ull << 20};
    Card card;
    AddressSpace space;
};

void require_same_outcome(const tpu_job_result &a, const tpu_job_result &b) {
    CHECK(a.status == b.status);
    CHECK(a.error_pc == b.error_pc);
    CHECK(a.fault_addr == b.fault_addr);
    CHECK(a.macs == b.macs);
    CHECK(a.macs_int8 == b.macs_int8);
    CHECK(a.macs_bf16 == b.macs_bf16);
    CHECK(a.macs_fp32 == b.macs_fp32);
    CHECK(a.dma_read_bytes == b.dma_read_bytes);
    CHECK(a.dma_write_bytes == b.dma_write_bytes);
}

// The program with a NOP after every MATMUL: no two pairs are adjacent, so nothing fuses.
Program unfused(const Program &p) {
    Program out;
    for (const tpu_insn &i : p) {
        out.push_back(i);
        if (i.hdr.opcode == TPU_OP_MATMUL)
            out.push_back(nop());
    }
    return out;
}

} // namespace

TEST_CASE("fused chains equal the cycle-accurate model exactly", "[fusion]") {
    const uint32_t threads = GENERATE(1u, 2u);
    EquivalenceRig rig(ProgramLimits{}, threads);
    for (uint64_t seed = 1; seed <= 300; seed++) {
        const Program p = chain_program(seed, rig.limits());
        CAPTURE(threads, seed);
        REQUIRE(rig.compare(p, seed * 31) == "");
    }
}

TEST_CASE("fused chains on a 128 x 128 array equal the unfused program", "[fusion]") {
    const uint32_t threads = GENERATE(1u, 2u);
    BigCard big(threads);
    std::mt19937_64 rng(threads);
    for (int round = 0; round < 24; round++) {
        const uint8_t dtype = kDtypes[round % 3];
        const uint32_t es = dtype_bytes(dtype);
        const int kind = round / 3 % 4;
        const uint32_t m = 1 + uint32_t(rng() % (kind == 3 ? 400 : 200));
        const uint32_t n = 1 + uint32_t(rng() % 128);
        // Full tiles (deeper than one fused pass takes), short ones (more links than one pass
        // takes, crossing fetch windows), random depths, or full tiles with scattered
        // activations (gathered in blocks of rows).
        std::vector<uint32_t> ks;
        if (kind == 0)
            ks.assign(36, 128);
        else if (kind == 1)
            ks.assign(70, 8 + 2 * uint32_t(rng() % 8)); // 8: the smallest tile that chains
        else if (kind == 2)
            for (uint32_t i = 0, links = 2 + uint32_t(rng() % 12); i < links; i++)
                ks.push_back(1 + uint32_t(rng() % 128));
        else
            ks.assign(24, 128);
        uint32_t depth = 0;
        for (uint32_t k : ks)
            depth += k;
        const bool scattered = kind == 3;
        // The random depths' second time round: the weights stored transposed (n rows of all
        // k, each tile a band of columns), cut into load chunks other than the tiles.
        const bool transposed = kind == 2 && round >= 12;
        CAPTURE(threads, round, dtype, m, n, depth, ks.size(), scattered, transposed);

        // UB: A (m x depth, or one m x k block per link), then the weight tiles (depth x n, or
        // n x depth transposed).
        const uint64_t a_bytes = uint64_t(m) * depth * es;
        const uint64_t w_at = (a_bytes + 63) / 64 * 64;
        const std::vector<uint8_t> a = chain_values(dtype, uint64_t(m) * depth, rng);
        const std::vector<uint8_t> w = chain_values(dtype, uint64_t(depth) * n, rng);
        big.space.write(BigCard::kInput, a.data(), a.size());
        big.space.write(BigCard::kInput + w_at, w.data(), w.size());
        const uint32_t acc_stride = 4 * n + 4 * uint32_t(rng() % 3);

        Program p;
        // Rows of up to 64 KiB - 1 bytes per DMA: a 1-row copy of everything, in pieces.
        const uint64_t total = w_at + w.size();
        for (uint64_t off = 0; off < total; off += 32768)
            p.push_back(dma_in(TPU_DT_INT8, 1, uint16_t(std::min<uint64_t>(32768, total - off)),
                               BigCard::kInput + off, 32768, uint32_t(off), 32768));
        p.push_back(nop()); // the chain starts at an odd pc
        uint32_t k0 = 0;
        for (size_t i = 0; i < ks.size(); i++) {
            const uint32_t k = ks[i];
            if (transposed)
                p.push_back(load_w(dtype, uint16_t(k), uint16_t(n), uint32_t(w_at + k0 * es),
                                   depth * es, TPU_F_W_TRANSPOSE));
            else
                p.push_back(
                    load_w(dtype, uint16_t(k), uint16_t(n), uint32_t(w_at + k0 * n * es), n * es));
            const uint16_t flags = i ? TPU_F_ACCUMULATE : 0;
            // Scattered: link i's activations are an m x k matrix of their own (gathered when
            // fused); else columns [k0, k0 + k) of A.
            if (scattered)
                p.push_back(matmul(dtype, uint16_t(m), uint16_t(k), uint32_t(m) * k0 * es, k * es,
                                   0, acc_stride, flags));
            else
                p.push_back(matmul(dtype, uint16_t(m), uint16_t(k), k0 * es, depth * es, 0,
                                   acc_stride, flags));
            k0 += k;
        }
        const uint8_t acc_dtype = dtype == TPU_DT_INT8 ? TPU_DT_INT32 : TPU_DT_FP32;
        p.push_back(dma_out_acc(acc_dtype, uint16_t(m), uint16_t(n), BigCard::kOutput, acc_stride,
                                0, acc_stride));
        p.push_back(halt());

        const uint64_t acc_bytes = uint64_t(m) * acc_stride;
        const BigCard::Output fused = big.run(p, acc_bytes);
        const BigCard::Output plain = big.run(unfused(p), acc_bytes);
        REQUIRE(fused.result.status == TPU_ERR_NONE);
        require_same_outcome(fused.result, plain.result);
        REQUIRE(fused.acc == plain.acc);
    }
}

TEST_CASE("sequences of a convolution's taps equal the program pair by pair", "[fusion]") {
    const uint32_t threads = GENERATE(1u, 2u);
    BigCard big(threads);
    std::mt19937_64 rng(40 + threads);
    // A 3 x 3 convolution of an 80 x 28 image padded by one (the stack of images libtpurt
    // makes) at stride 1: tap (ky, kx) is a LOAD_W of its C x F weights and a MATMUL of the
    // padded image's pixels at (y + ky, x + kx), one row group per output row.
    constexpr uint32_t h = 80, w = 28, hp = h + 2, wp = w + 2;
    for (int round = 0; round < 12; round++) {
        const uint8_t dtype = kDtypes[round % 3];
        const uint32_t es = dtype_bytes(dtype);
        const uint32_t c = 1 + uint32_t(round / 3 % 3);
        const uint32_t f = round < 9 ? 32 : 40 + uint32_t(rng() % 24);
        const bool accumulate_first = round % 2;
        CAPTURE(threads, round, dtype, c, f, accumulate_first);
        const uint64_t image_bytes = uint64_t(hp) * wp * c * es;
        const uint64_t w_at = (image_bytes + 63) / 64 * 64;
        const std::vector<uint8_t> image = chain_values(dtype, uint64_t(hp) * wp * c, rng);
        const std::vector<uint8_t> weights = chain_values(dtype, 9ull * c * f, rng);
        big.space.write(BigCard::kInput, image.data(), image.size());
        big.space.write(BigCard::kInput + w_at, weights.data(), weights.size());
        const uint32_t acc_stride = 4 * f;

        Program p;
        const uint64_t total = w_at + weights.size();
        for (uint64_t off = 0; off < total; off += 32768)
            p.push_back(dma_in(TPU_DT_INT8, 1, uint16_t(std::min<uint64_t>(32768, total - off)),
                               BigCard::kInput + off, 32768, uint32_t(off), 32768));
        // The tiles from the UB, or from host memory as libtpurt's convolutions load them;
        // the last round's fifth tile from an unmapped page: a fault inside the sequence.
        const bool from_host = round % 4 >= 2;
        const bool faults = round == 11;
        uint32_t fifth = 0; // the fifth LOAD_W's pc
        for (uint32_t tap = 0; tap < 9; tap++) {
            const uint64_t w_off = w_at + uint64_t(tap) * c * f * es;
            if (tap == 4)
                fifth = uint32_t(p.size());
            if (faults && tap == 4)
                p.push_back(
                    load_w_host(dtype, uint16_t(c), uint16_t(f), BigCard::kUnmapped, f * es));
            else if (from_host)
                p.push_back(
                    load_w_host(dtype, uint16_t(c), uint16_t(f), BigCard::kInput + w_off, f * es));
            else
                p.push_back(load_w(dtype, uint16_t(c), uint16_t(f), uint32_t(w_off), f * es));
            tpu_insn mm =
                matmul(dtype, uint16_t(h * w), uint16_t(c), (tap / 3 * wp + tap % 3) * c * es,
                       c * es, 0, acc_stride, tap || accumulate_first ? TPU_F_ACCUMULATE : 0);
            mm.mxu.row_group = w;
            mm.mxu.group_stride = wp * c * es;
            p.push_back(mm);
        }
        const uint8_t acc_dtype = dtype == TPU_DT_INT8 ? TPU_DT_INT32 : TPU_DT_FP32;
        for (uint32_t r = 0; r < h * w; r += 1024)
            p.push_back(dma_out_acc(acc_dtype, uint16_t(std::min(1024u, h * w - r)), uint16_t(f),
                                    BigCard::kOutput + uint64_t(r) * acc_stride, acc_stride,
                                    r * acc_stride, acc_stride));
        p.push_back(halt());

        const uint64_t acc_bytes = uint64_t(h) * w * acc_stride;
        const BigCard::Output fused = big.run(p, acc_bytes);
        const BigCard::Output plain = big.run(unfused(p), acc_bytes);
        CAPTURE(from_host, faults);
        REQUIRE(fused.result.status == (faults ? TPU_ERR_MMU_FAULT : TPU_ERR_NONE));
        if (faults) {
            // The fifth LOAD_W in both, four NOPs later in the program pair by pair; the four
            // pairs before it counted.
            tpu_job_result expected = fused.result;
            expected.error_pc = fifth + 4;
            CHECK(fused.result.error_pc == fifth);
            require_same_outcome(expected, plain.result);
            CHECK(fused.result.macs == 4ull * h * w * c * f);
        } else {
            require_same_outcome(fused.result, plain.result);
            REQUIRE(fused.acc == plain.acc);
        }
    }
}

TEST_CASE("a fault inside a chain is reported exactly as without fusion", "[fusion]") {
    EquivalenceRig rig(ProgramLimits{}, 2);
    const ProgramLimits &lim = rig.limits();
    for (uint64_t seed = 1; seed <= 60; seed++) {
        std::mt19937_64 rng(seed);
        Chain c = random_chain(rng);
        c.acc_stride = 4 * c.n;
        c.acc_addr = 0;
        c.k.resize(4, c.k[0]);
        Program p;
        p.push_back(dma_in(TPU_DT_INT8, 1, uint16_t(lim.ub_bytes), lim.input_va, lim.ub_bytes, 0,
                           lim.ub_bytes));
        push_chain(c, rng, p);
        // Break link 1, 2 or 3 in one of several ways; both modes must stop at the same pc
        // with the same fault and counters.
        tpu_insn &load = p[1 + 2 * (1 + seed % 3)];
        tpu_insn &mm = p[2 + 2 * (1 + seed % 3)];
        switch (seed % 6) {
        case 0: // activations past the end of the UB
            mm.mxu.src_addr = lim.ub_bytes - dtype_bytes(c.dtype);
            mm.mxu.src_stride = 0;
            break;
        case 1: // weights of another depth: NO_WEIGHTS
            mm.mxu.cols = uint16_t(mm.mxu.cols + 1);
            break;
        case 2: // accumulators past the end
            mm.mxu.acc_addr = lim.acc_bytes - 4;
            break;
        case 3: // a reserved field
            mm.mxu.reserved = 1;
            break;
        case 4: // a tile past the end of the UB
            load.mxu.src_addr = lim.ub_bytes - dtype_bytes(c.dtype);
            break;
        default: // an unknown opcode where the MATMUL was
            mm.hdr.opcode = 0x7f;
            break;
        }
        p.push_back(halt());
        CAPTURE(seed);
        REQUIRE(rig.compare(p, seed) == "");
    }
}

TEST_CASE("a chain running into an unmapped program page faults there", "[fusion]") {
    // Pairs up to and across the end of the program's first page (instruction 128); the
    // second page is unmapped. Fast mode must fetch it exactly when the unfused card would.
    const uint32_t start = GENERATE(100u, 119u, 120u, 127u);
    ProgramLimits lim;
    tpu_job_result results[2];
    for (uint32_t mode : {TPU_ENGINE_FAST, TPU_ENGINE_CYCLE_ACCURATE}) {
        HostMemory mem(64ull << 20);
        tpu_engine_config cfg = Card::default_config();
        cfg.mxu_rows = lim.mxu_rows;
        cfg.mxu_cols = lim.mxu_cols;
        cfg.ub_bytes = lim.ub_bytes;
        cfg.acc_bytes = lim.acc_bytes;
        cfg.mode = mode;
        Card card(mem, cfg);
        AddressSpace space = card.address_space(1);
        Program p(start, nop());
        while (p.size() < 160) {
            p.push_back(load_w(TPU_DT_INT8, 8, 8, 0, 8));
            p.push_back(matmul(TPU_DT_INT8, 4, 8, 64, 8, 0, 32, TPU_F_ACCUMULATE));
        }
        const uint64_t bytes = p.size() * sizeof(tpu_insn);
        space.map(Card::kProgramVa, bytes, kRead);
        space.write(Card::kProgramVa, p.data(), bytes);
        space.unmap(Card::kProgramVa + TPU_PAGE_SIZE, bytes - TPU_PAGE_SIZE);
        results[mode == TPU_ENGINE_FAST ? 0 : 1] =
            card.run(space.ctx_id(), Card::kProgramVa, uint32_t(bytes));
    }
    CAPTURE(start);
    CHECK(results[0].status == TPU_ERR_MMU_FAULT);
    CHECK(results[0].error_pc == 128);
    CHECK(results[0].fault_addr == Card::kProgramVa + TPU_PAGE_SIZE);
    require_same_outcome(results[0], results[1]);
    CHECK(results[0].cycles == results[1].cycles);
    CHECK(results[0].tlb_misses == results[1].tlb_misses);
}

TEST_CASE("the weights after a chain are the last LOAD_W's", "[fusion]") {
    BigCard big(1);
    // W tile i is all (i + 1); A is all ones. The chain of 3 tiles gives 8 * (1 + 2 + 3) per
    // element; a MATMUL after it without LOAD_W uses tile 3: 8 * 3.
    std::vector<uint8_t> ub(64 + 3 * 64);
    std::fill_n(ub.begin(), 64, 1);
    for (int t = 0; t < 3; t++)
        std::fill_n(ub.begin() + 64 + 64 * t, 64, uint8_t(t + 1));
    big.space.write(BigCard::kInput, ub.data(), ub.size());
    Program p;
    p.push_back(dma_in(TPU_DT_INT8, 1, uint16_t(ub.size()), BigCard::kInput, 4096, 0, 4096));
    for (uint32_t t = 0; t < 3; t++) {
        p.push_back(load_w(TPU_DT_INT8, 8, 8, 64 + 64 * t, 8));
        p.push_back(matmul(TPU_DT_INT8, 8, 8, 0, 8, 0, 32, t ? TPU_F_ACCUMULATE : 0));
    }
    p.push_back(matmul(TPU_DT_INT8, 8, 8, 0, 8, 256, 32));
    p.push_back(dma_out_acc(TPU_DT_INT32, 16, 8, BigCard::kOutput, 32, 0, 32));
    p.push_back(halt());
    const BigCard::Output out = big.run(p, 16 * 32);
    REQUIRE(out.result.status == TPU_ERR_NONE);
    std::vector<int32_t> acc(16 * 8);
    std::memcpy(acc.data(), out.acc.data(), out.acc.size());
    for (int r = 0; r < 16; r++)
        for (int j = 0; j < 8; j++) {
            CAPTURE(r, j);
            CHECK(acc[r * 8 + j] == (r < 8 ? 48 : 24));
        }
}

TEST_CASE("chains that must run pair by pair give the unfused results", "[fusion]") {
    // Overlapping accumulator rows (each MATMUL applies its rows one after the other), a
    // MATMUL to other rows, and odd bf16 depths: compared against the cycle-accurate model.
    EquivalenceRig rig(ProgramLimits{}, 1);
    const ProgramLimits &lim = rig.limits();
    for (uint8_t dtype : kDtypes) {
        for (int variant = 0; variant < 3; variant++) {
            std::mt19937_64 rng(variant);
            Chain c;
            c.dtype = dtype;
            c.m = 12;
            c.n = 8;
            c.k = {2, 4, 3, 6, 5};
            c.acc_stride = variant == 0 ? 8 : 32;
            Program p;
            p.push_back(dma_in(TPU_DT_INT8, 1, uint16_t(lim.ub_bytes), lim.input_va, lim.ub_bytes,
                               0, lim.ub_bytes));
            push_chain(c, rng, p);
            if (variant == 1)
                p[4].mxu.acc_addr = 1024; // the second MATMUL writes other rows
            p.push_back(dma_out_acc(TPU_DT_INT32, 1, uint16_t(lim.acc_bytes / 4), lim.dump_va,
                                    lim.acc_bytes, 0, lim.acc_bytes));
            p.push_back(halt());
            CAPTURE(dtype, variant);
            REQUIRE(rig.compare(p, 7 + variant) == "");
        }
    }
}
