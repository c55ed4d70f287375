// SPDX-License-Identifier: MIT
// padded_rows.cpp - an image's rows read into the unified buffer inside their padding (see
// padded_rows.hpp).
#include "codegen/padded_rows.hpp"

#include <algorithm>

namespace tpurt::detail {

namespace {

// rows x cols elements of `pad` at `dst`, rows `stride` bytes apart: every row reads the same
// zero accumulators.
void fill(ProgramBuilder &out, const PaddedImage &image, PadValue pad, std::uint32_t dst,
          std::uint64_t stride, std::uint64_t rows, std::uint64_t cols) {
    if (rows == 0 || cols == 0)
        return;
    out.activate({.out_type = image.type,
                  .function = pad == PadValue::Lowest ? Activation::Log : Activation::None,
                  .acc_addr = 0,
                  .acc_stride = 0,
                  .dst_addr = dst,
                  .dst_stride = static_cast<std::uint32_t>(stride),
                  .rows = static_cast<std::uint32_t>(rows),
                  .cols = static_cast<std::uint32_t>(cols)});
}

} // namespace

void load_padded_rows(ProgramBuilder &out, const PaddedImage &image, PadValue pad,
                      std::uint64_t image_addr, std::uint64_t py0, std::uint64_t rows,
                      std::uint32_t local_addr) {
    const std::uint64_t elem = element_size(image.type);
    const std::uint64_t prow = image.padded_row_bytes();
    const std::uint64_t pixel = std::uint64_t{image.channels} * elem;
    const std::uint64_t end = py0 + rows, top = image.pad_h, bottom = top + image.height;
    // The padded rows above and below the image, whole.
    const std::uint64_t top_rows = std::min(end, top) - std::min(py0, top);
    fill(out, image, pad, local_addr, prow, top_rows, prow / elem);
    const std::uint64_t below = std::max(py0, bottom);
    if (end > below)
        fill(out, image, pad, static_cast<std::uint32_t>(local_addr + (below - py0) * prow), prow,
             end - below, prow / elem);
    // The image's rows: their left and right padding, then their pixels.
    const std::uint64_t first = std::max(py0, top), last = std::min(end, bottom);
    if (first >= last)
        return;
    const auto at = static_cast<std::uint32_t>(local_addr + (first - py0) * prow);
    const std::uint64_t side = std::uint64_t{image.pad_w} * pixel;
    fill(out, image, pad, at, prow, last - first, side / elem);
    fill(out, image, pad, static_cast<std::uint32_t>(at + side + image.width * pixel), prow,
         last - first, side / elem);
    out.dma_in({.type = image.type,
                .host_addr = image_addr + (first - top) * image.width * pixel,
                .host_stride = image.width * pixel,
                .local_addr = static_cast<std::uint32_t>(at + side),
                .local_stride = static_cast<std::uint32_t>(prow),
                .rows = static_cast<std::uint32_t>(last - first),
                .cols = image.width * image.channels});
}

} // namespace tpurt::detail
