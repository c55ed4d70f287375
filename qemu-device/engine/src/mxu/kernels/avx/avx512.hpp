// SPDX-License-Identifier: MIT
// The AVX-512 block kernels shared between kernel sets: bf16 and fp32 (AVX-512F) by the AVX-512,
// AVX512-VNNI and AVX512-BF16 sets, int8 by vpdpbusd (AVX512-VNNI) by the VNNI and BF16 sets,
// and bf16 against tiles of a few k by all of them and the AMX set.
// Run them only after a CPU check for the instruction sets they need.
#pragma once

#if defined(__x86_64__)
#include "mxu/kernels/kernels.hpp"

namespace tpu::engine::avx512 {

void bf16_block(const WeightTile &tile, const MatmulArgs &args, uint32_t m0, uint32_t m1,
                uint32_t n0, uint32_t n1);
void fp32_block(const WeightTile &tile, const MatmulArgs &args, uint32_t m0, uint32_t m1,
                uint32_t n0, uint32_t n1);
void int8_vnni_block(const WeightTile &tile, const MatmulArgs &args, uint32_t m0, uint32_t m1,
                     uint32_t n0, uint32_t n1);

// bf16 tiles of at most kSmallK k (avx512_small_k.cpp): every bf16 kernel set of an AVX-512
// host hands them to bf16_small_k_block, which computes the same bits without packing panels.
inline constexpr uint32_t kSmallK = 8;
void bf16_small_k_block(const WeightTile &tile, const MatmulArgs &args, uint32_t m0, uint32_t m1,
                        uint32_t n0, uint32_t n1);

} // namespace tpu::engine::avx512
#endif
