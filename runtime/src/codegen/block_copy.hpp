// SPDX-License-Identifier: MIT
// block_copy.hpp - internal: copies of 2-D blocks of elements from one place in device memory to
// another, each a DMA_IN of some of its rows into the unified buffer and a DMA_OUT of them, with
// any row strides on either side. For the scratch layouts no permute gives: a grouped or dilated
// kernel gathered tap by tap, an image spread out with zeros between its pixels.
#pragma once

#include "tpurt/codegen/program_builder.hpp"
#include "tpurt/device_info.hpp"
#include "tpurt/types/dtype.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tpurt::detail {

struct BlockCopy {
    std::uint64_t src = 0, src_stride = 0; // device addresses; bytes between rows
    std::uint64_t dst = 0, dst_stride = 0;
    std::uint32_t rows = 0, cols = 0; // elements
};

// The programs copying `blocks` in order (chunks of at most 65535 rows and columns that fit the
// unified buffer); exact copies of the elements, any dtype.
std::vector<Program> compile_block_copies(DType type, std::span<const BlockCopy> blocks,
                                          const ArrayLimits &limits,
                                          std::size_t max_program_bytes = TPU_PROGRAM_MAX_BYTES);

} // namespace tpurt::detail
