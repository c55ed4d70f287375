// SPDX-License-Identifier: MIT
// Kernels of the fast functional matrix unit: a block of rows [m0, m1) x columns [n0, n1) of one
// MATMUL against the loaded weight tile. Every implementation (scalar, AVX2+FMA, AVX-512,
// AVX512-VNNI, AVX512-BF16, AMX) computes, for each row m and column n of the block,
// acc = (accumulate ? acc : 0), then for fp32, k ascending: acc = fma(a[m][k], w[k][n], acc)
// (one IEEE binary32 rounding per step); for bf16, blocks of 32 k from the start of the tile,
// each summed in an even and an odd chain with the card's bf16 step and added to acc once
// (mxu/bf16_numerics.hpp: exact products, one rounding per step, DAZ/FTZ); for int8
// acc += a[m][k] * w[k][n] modulo 2^32 (any order gives the same sum); NaN results are stored
// as kCanonicalNan — so they are bit-identical.
// The rows of one block must not overlap in the accumulators: FastMxu hands overlapping rows
// over one at a time, in ascending m.
#pragma once

#include <cstdint>
#include <vector>

#include "mxu/kernels/tiles.hpp"
#include "mxu/mxu_types.hpp"
#include "mxu/weight_tile.hpp"

namespace tpu::engine {

// Rows [m0, m1) x columns [n0, n1) of args (n1 <= tile.n()) against the loaded tile.
using BlockKernel = void (*)(const WeightTile &tile, const MatmulArgs &args, uint32_t m0,
                             uint32_t m1, uint32_t n0, uint32_t n1);

struct RowKernels {
    const char *name;
    BlockKernel int8;
    BlockKernel bf16;
    BlockKernel fp32;
    // Rows of the blocks FastMxu hands an int8 or bf16 kernel (fp32 kernels get 48): a multiple
    // of the kernels' own steps, so that no block ends in a partial step where M does not.
    uint32_t int_bf16_block_rows = 48;

    // Rows of the blocks of a MATMUL against a k x n tile: fp32 kernels get a panel, or four
    // when the tile's words span more than two of the L2-sized ranges of k that the vector
    // kernels walk every panel of a block through in turn (tiles.hpp).
    uint32_t block_rows(MxuType type, uint32_t k, uint32_t n) const {
        if (type != MxuType::Fp32)
            return int_bf16_block_rows;
        const bool long_chain = 4 * uint64_t(k) * n > 2 * tiles::kL2WeightBytes;
        return long_chain ? 4 * tiles::kPanelRows : tiles::kPanelRows;
    }

    BlockKernel for_type(MxuType type) const {
        switch (type) {
        case MxuType::Int8:
            return int8;
        case MxuType::Bf16:
            return bf16;
        case MxuType::Fp32:
            break;
        }
        return fp32;
    }
};

extern const RowKernels kScalarRowKernels;
#if defined(__x86_64__)
extern const RowKernels kAvx2RowKernels;
extern const RowKernels kAvx512RowKernels;     // AVX-512F; int8 by 32-bit multiplies
extern const RowKernels kAvx512VnniRowKernels; // AVX-512F + VNNI; int8 by vpdpbusd
extern const RowKernels kAvx512Bf16RowKernels; // + AVX512-BF16; bf16 by vdpbf16ps
extern const RowKernels kAmxRowKernels;        // AMX: int8 by tdpbssd, bf16 by tdpbf16ps
#endif

// The kernel sets this CPU can run, by its feature flags (and, for AMX, the process's
// permission), fastest first; the scalar set is always last.
std::vector<const RowKernels *> cpu_row_kernels();

// Those of cpu_row_kernels() whose kernels pass the start-up check (mxu/kernels/check/check.hpp).
// The tests run every set of cpu_row_kernels() and require this list to be the same, so a set
// that fails its check fails the tests instead of being dropped silently.
std::vector<const RowKernels *> supported_row_kernels();

// The fastest kernel set for this CPU, or the one the environment's TPU_ENGINE_KERNELS names
// (one of supported_row_kernels()), chosen once per process.
const RowKernels &best_row_kernels();

} // namespace tpu::engine
