// SPDX-License-Identifier: MIT
// padded_rows.hpp - internal: rows of an NHWC image read into the unified buffer inside a border
// of padding, for pooling with padding (compile_pool, and compile_pool_grad's padded copy of x).
// The padding is written on the card: ACTIVATE of accumulators that are still zero (the programs
// that use this run no MATMUL) gives +0 with NONE and -inf with LOG (spec 1.4), which converts to
// the lowest value of an integer type (int8 -128, int32 -2^31).
#pragma once

#include "tpurt/codegen/program_builder.hpp"
#include "tpurt/types/dtype.hpp"

#include <cstdint>

namespace tpurt::detail {

enum class PadValue {
    Zero,   // +0: average pooling counts the padding in its window
    Lowest, // -inf (floats) or the type's minimum: max pooling never picks the padding
};

// An image of height x width pixels of `channels` elements of `type`, with pad_h rows above and
// below and pad_w pixels left and right of it.
struct PaddedImage {
    DType type = DType::Fp32;
    std::uint32_t height = 0, width = 0, channels = 0, pad_h = 0, pad_w = 0;

    std::uint64_t padded_height() const { return height + 2ull * pad_h; }
    std::uint64_t padded_width() const { return width + 2ull * pad_w; }
    // Bytes of one padded row (padded_width pixels).
    std::uint64_t padded_row_bytes() const {
        return padded_width() * channels * element_size(type);
    }
};

// Padded rows [py0, py0 + rows) of the image at host address `image_addr` (densely packed) into
// the unified buffer at `local_addr`, padded rows padded_row_bytes() apart: the padding cells
// they hold written with `pad`, the image's pixels DMA'd in between. A padded row must hold at
// most 65535 elements (the caller checks).
void load_padded_rows(ProgramBuilder &out, const PaddedImage &image, PadValue pad,
                      std::uint64_t image_addr, std::uint64_t py0, std::uint64_t rows,
                      std::uint32_t local_addr);

} // namespace tpurt::detail
