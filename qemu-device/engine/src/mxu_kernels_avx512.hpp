// SPDX-License-Identifier: MIT
// The AVX-512F bf16 and fp32 block kernels, shared by the AVX-512 and AVX512-VNNI kernel sets
// (which differ only in int8). Run them only after a CPU check for avx512f.
#pragma once

#if defined(__x86_64__)
#include "mxu_kernels.hpp"

namespace tpu::engine::avx512 {

void bf16_block(const WeightTile &tile, const MatmulArgs &args, uint32_t m0, uint32_t m1,
                uint32_t n0, uint32_t n1);
void fp32_block(const WeightTile &tile, const MatmulArgs &args, uint32_t m0, uint32_t m1,
                uint32_t n0, uint32_t n1);

} // namespace tpu::engine::avx512
#endif
