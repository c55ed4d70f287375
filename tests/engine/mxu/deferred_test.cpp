// SPDX-License-Identifier: MIT
// Deferred MATMULs in fast mode (executor/deferred_matmuls.cpp): the k-outer tiled matmuls
// libtpurt emits — per k tile the activations into the UB, then per column block a weight DMA,
// LOAD_W and MATMUL into that block's accumulators — are computed per column block over all k
// tiles at once, which must be invisible. Random such programs on a 32 x 8 card (bf16 tiles of
// whole blocks of 32 k join, others not), with weights from the UB (also transposed) or the
// host, activations reloaded per column block or side by side in rows of all k, DMAs over the
// activations or the loaded weights' source, instructions that must compute the waiting
// MATMULs first, and faults, against the cycle-accurate model (which never defers): results,
// counters, cycles and final state identical.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "tpu_test/equivalence.hpp"
#include "tpu_test/program.hpp"
#include "tpu_test/random_data.hpp"

using namespace tpu::test;

namespace {

constexpr uint8_t kDtypes[] = {TPU_DT_INT8, TPU_DT_BF16, TPU_DT_FP32};
constexpr uint32_t kWeightsAt = 0;      // UB: the weight tile of each column block
constexpr uint32_t kActivations = 4096; // UB: the k tile's activations
constexpr uint32_t kScratch = 12288;    // UB: where disturbing instructions write

ProgramLimits limits() {
    ProgramLimits lim;
    lim.mxu_rows = 32;
    lim.mxu_cols = 8;
    return lim;
}

// One of the instructions that may come between the pairs of a tiled matmul.
void push_disturbance(std::mt19937_64 &rng, const ProgramLimits &lim, uint8_t dtype, uint32_t m,
                      uint32_t k, uint32_t acc_stride, Program &p) {
    const uint32_t es = dtype_bytes(dtype);
    switch (rng() % 8) {
    case 0:
        p.push_back(nop());
        break;
    case 1:
        p.push_back(sync_insn());
        break;
    case 2: // over the activations: the next column block must not share them
        p.push_back(dma_in(dtype, uint16_t(m), uint16_t(k), lim.input_va + 8192, k * es,
                           kActivations, k * es));
        break;
    case 3: // into the UB elsewhere: nothing changes for the waiting MATMULs
        p.push_back(dma_in(TPU_DT_INT8, 4, 64, lim.input_va + 16384, 64, kScratch, 64));
        break;
    case 4: // reads the accumulators
        p.push_back(dma_out_acc(TPU_DT_INT32, 2, 4, lim.output_va, 16, 0, 16));
        break;
    case 5: // a MATMUL into accumulators that overlap the first column block's
        p.push_back(matmul(dtype, uint16_t(m), uint16_t(k), kActivations, k * es,
                           4 * (1 + rng() % 8), acc_stride, TPU_F_ACCUMULATE));
        break;
    case 6: // over the loaded tile's source, then a MATMUL: the tile stays as it was loaded
        p.push_back(dma_in(dtype, 4, 8, lim.input_va + 20480, 8 * es, kWeightsAt, 8 * es));
        p.push_back(matmul(dtype, uint16_t(m), uint16_t(k), kActivations, k * es, 8192, 64,
                           TPU_F_ACCUMULATE));
        break;
    default: // a MATMUL of rows the others do not have
        p.push_back(matmul(dtype, uint16_t(m + 1), uint16_t(k), kActivations, k * es, 8192, 64,
                           TPU_F_ACCUMULATE));
        break;
    }
}

// The weights W[k0, k0 + k)[c0, c0 + cols) of one column block into the array, from the host
// region w_host (rows of 64 elements): DMA'd to the UB and loaded (staged until a MATMUL needs
// the tile, deferred MATMULs take the UB bytes), the same transposed, or loaded from the host.
void push_weights(std::mt19937_64 &rng, uint8_t dtype, uint32_t k0, uint32_t k, uint32_t c0,
                  uint32_t cols, uint64_t w_host, Program &p) {
    const uint32_t es = dtype_bytes(dtype);
    switch (rng() % 4) {
    case 0: // transposed: cols rows of k elements
        p.push_back(dma_in(dtype, uint16_t(cols), uint16_t(k), w_host + (c0 * 64 + k0) * es,
                           64 * es, kWeightsAt, k * es));
        p.push_back(
            load_w(dtype, uint16_t(k), uint16_t(cols), kWeightsAt, k * es, TPU_F_W_TRANSPOSE));
        break;
    case 1:
        p.push_back(load_w_host(dtype, uint16_t(k), uint16_t(cols),
                                w_host + (uint64_t(k0) * 64 + c0) * es, 64 * es));
        break;
    default:
        p.push_back(dma_in(dtype, uint16_t(k), uint16_t(cols),
                           w_host + (uint64_t(k0) * 64 + c0) * es, 64 * es, kWeightsAt, cols * es));
        p.push_back(load_w(dtype, uint16_t(k), uint16_t(cols), kWeightsAt, cols * es));
        break;
    }
}

// The dtype k_outer_program(seed) uses.
uint8_t program_dtype(uint64_t seed) {
    std::mt19937_64 rng(seed);
    return kDtypes[rng() % 3];
}

// A k-outer tiled matmul: C[m, n] (+)= A[m, K] x W[K, n] in column blocks of up to 8 and k
// tiles of up to 32 (after MATMULs that leave the accumulators non-zero), the k tiles'
// activations at one place or side by side, then the UB and accumulators dumped.
Program k_outer_program(uint64_t seed, const ProgramLimits &lim) {
    std::mt19937_64 rng(seed);
    const uint8_t dtype = kDtypes[rng() % 3]; // program_dtype(seed)
    const uint32_t es = dtype_bytes(dtype);
    const uint32_t m = 1 + uint32_t(rng() % 24);
    const uint32_t col_blocks = 1 + uint32_t(rng() % 4);
    const uint32_t last_cols = 1 + uint32_t(rng() % 8);
    const uint32_t n = 8 * (col_blocks - 1) + last_cols;
    const uint32_t k_tiles = 1 + uint32_t(rng() % 4);
    // bf16 joins only after tiles of whole blocks of 32; sometimes not.
    const uint32_t tile_k = dtype == TPU_DT_BF16 && rng() % 3 ? 32 : 1 + uint32_t(rng() % 32);
    const uint32_t last_k = 1 + uint32_t(rng() % tile_k);
    const uint32_t acc_stride = 4 * n + 4 * uint32_t(rng() % 3);
    const bool accumulate_first = rng() % 3 == 0;
    const bool reload_a = rng() % 4 == 0;                 // per column block, as when A is streamed
    const uint32_t disturb = uint32_t(rng() % 2) ? 0 : 3; // one in `disturb` pairs, or none
    const uint64_t a_host = lim.input_va, w_host = lim.input_va + 32768;
    // The k tiles' activations side by side in rows of all K (read in place at the end, unless
    // a DMA over them had them copied out first), or each k tile at the same place.
    const uint32_t k_total = (k_tiles - 1) * tile_k + last_k;
    const bool side_by_side = rng() % 2 && m * k_total * es <= kScratch - kActivations;

    Program p;
    // Accumulators that are not zero to start from: per column block a MATMUL of K = 8 (which
    // the first k tile joins if it accumulates).
    p.push_back(dma_in(dtype, uint16_t(m), 8, a_host + 4096, 64 * es, kActivations, 8 * es));
    for (uint32_t c = 0; c < col_blocks; c++) {
        const uint32_t cols = c + 1 == col_blocks ? last_cols : 8;
        p.push_back(
            dma_in(dtype, 8, uint16_t(cols), w_host + 8 * c * es, 64 * es, kWeightsAt, cols * es));
        p.push_back(load_w(dtype, 8, uint16_t(cols), kWeightsAt, cols * es));
        p.push_back(matmul(dtype, uint16_t(m), 8, kActivations, 8 * es, 32 * c, acc_stride, 0));
    }
    for (uint32_t t = 0; t < k_tiles; t++) {
        const uint32_t k = t + 1 == k_tiles ? last_k : tile_k;
        const uint32_t k0 = t * tile_k;
        const uint32_t a_at = side_by_side ? kActivations + k0 * es : kActivations;
        const uint32_t a_stride = (side_by_side ? k_total : k) * es;
        const auto load_a = [&] {
            p.push_back(
                dma_in(dtype, uint16_t(m), uint16_t(k), a_host + k0 * es, 64 * es, a_at, a_stride));
        };
        if (!reload_a)
            load_a();
        for (uint32_t c = 0; c < col_blocks; c++) {
            const uint32_t cols = c + 1 == col_blocks ? last_cols : 8;
            push_weights(rng, dtype, k0, k, 8 * c, cols, w_host, p);
            if (reload_a)
                load_a();
            const uint16_t flags = t > 0 || accumulate_first ? TPU_F_ACCUMULATE : 0;
            p.push_back(
                matmul(dtype, uint16_t(m), uint16_t(k), a_at, a_stride, 32 * c, acc_stride, flags));
            if (disturb && rng() % disturb == 0)
                push_disturbance(rng, lim, dtype, m, k, acc_stride, p);
        }
    }
    push_state_dump(p, lim);
    return p;
}

// The input region as chain_values() of the program's dtype.
std::vector<uint8_t> chain_input(uint8_t dtype, const ProgramLimits &lim, uint64_t seed) {
    std::mt19937_64 rng(seed);
    return chain_values(dtype, lim.input_bytes / dtype_bytes(dtype), rng);
}

} // namespace

TEST_CASE("deferred k-outer matmuls equal the cycle-accurate model exactly", "[deferred]") {
    const uint32_t threads = GENERATE(1u, 2u);
    EquivalenceRig rig(limits(), threads);
    for (uint64_t seed = 1; seed <= 400; seed++) {
        const Program p = k_outer_program(seed, rig.limits());
        CAPTURE(threads, seed);
        REQUIRE(rig.compare(p, chain_input(program_dtype(seed), rig.limits(), seed * 131)) == "");
    }
}

TEST_CASE("a fault among deferred MATMULs is reported exactly as without deferring", "[deferred]") {
    EquivalenceRig rig(limits(), 2);
    const ProgramLimits &lim = rig.limits();
    for (uint64_t seed = 1; seed <= 60; seed++) {
        Program p = k_outer_program(seed, lim);
        std::mt19937_64 rng(seed);
        // A DMA from an unmapped host page, or a MATMUL past the accumulators, somewhere after
        // the first MATMUL; the dumps still show the state the faulting job left.
        const size_t at = 5 + rng() % (p.size() - 7);
        const tpu_insn bad =
            rng() % 2 ? dma_in(TPU_DT_INT8, 1, 16, 0x7000000, 16, kScratch, 16)
                      : matmul(TPU_DT_FP32, 4, 1, kActivations, 4, lim.acc_bytes - 8, 16);
        p.insert(p.begin() + long(at), bad);
        CAPTURE(seed, at);
        REQUIRE(rig.compare(p, chain_input(program_dtype(seed), lim, seed * 7)) == "");
    }
}
