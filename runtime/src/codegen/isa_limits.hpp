// SPDX-License-Identifier: MIT
// isa_limits.hpp - internal: the limits of one card instruction that the compilers tile by,
// derived from the instruction fields of union tpu_insn (tpu_hw.h).
#pragma once

#include <tpu_hw.h>

#include <cstdint>
#include <limits>

namespace tpurt {

// The most rows or columns one instruction moves or computes (DMA, MATMUL, ACTIVATE, VECTOR,
// POOL, ...): their rows and cols fields are 16 bits wide.
constexpr std::uint64_t max_dim = std::numeric_limits<decltype(tpu_insn_dma::rows)>::max();
static_assert(max_dim == std::numeric_limits<decltype(tpu_insn_dma::cols)>::max() &&
              max_dim == std::numeric_limits<decltype(tpu_insn_mxu::rows)>::max() &&
              max_dim == std::numeric_limits<decltype(tpu_insn_act::cols)>::max() &&
              max_dim == std::numeric_limits<decltype(tpu_insn_vec::rows)>::max() &&
              max_dim == std::numeric_limits<decltype(tpu_insn_pool::cols)>::max());

} // namespace tpurt
