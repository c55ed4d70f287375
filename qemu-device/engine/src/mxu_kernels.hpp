// SPDX-License-Identifier: MIT
// Row kernels of the fast functional matrix unit: one activation row times the loaded weight
// tile into one accumulator row. Every implementation (scalar, AVX2+FMA, AVX-512) computes, for
// each column n, acc = (accumulate ? acc : 0); for k ascending: acc = fma(a[k], w[k][n], acc)
// (bf16, one IEEE binary32 rounding per step) or acc += a[k] * w[k][n] modulo 2^32 (int8) — so
// they are bit-identical; only the width of the vectors over n differs.
#pragma once

#include <cstdint>
#include <vector>

namespace tpu::engine {

// w: K x N words of the weight tile (WeightTile::words()); a: K activations (int8 or bf16);
// acc: N accumulator elements (int32 or fp32, 4-byte aligned).
using RowKernel = void (*)(const uint32_t *w, uint32_t k, uint32_t n, const uint8_t *a,
                           uint8_t *acc, bool accumulate);

struct RowKernels {
    const char *name;
    RowKernel int8;
    RowKernel bf16;
};

extern const RowKernels kScalarRowKernels;
#if defined(__x86_64__)
extern const RowKernels kAvx2RowKernels;
extern const RowKernels kAvx512RowKernels;
#endif

// The kernel sets this CPU can run, fastest first (the scalar set is always last).
std::vector<const RowKernels *> supported_row_kernels();

// The fastest kernel set for this CPU.
const RowKernels &best_row_kernels();

} // namespace tpu::engine
