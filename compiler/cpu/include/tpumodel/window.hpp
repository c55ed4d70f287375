// SPDX-License-Identifier: MIT
// window.hpp - a 2-D window op's geometry (Conv, pooling, the integer convolutions) as ONNX
// defines it: kernel, strides, dilations, the four pads with auto_pad resolved, the output's
// size. The CPU kernels, the card's binders and the placement rules read it alike.
#pragma once

#include "tpumodel/model.hpp"

#include <cstdint>

namespace tpumodel::cpu {

struct Window {
    std::int64_t kh, kw, sh, sw, dh, dw;
    std::int64_t pt, pl, pb, pr; // pads: top, left, bottom, right
    std::int64_t oh, ow;
};

// The window of `node` (its strides, dilations, pads or auto_pad) over an h x w image with a
// kh x kw kernel. Throws KernelError for attributes that are not 2-D, ceil_mode 1, an unknown
// auto_pad, or a window larger than the padded image.
Window window(const Node &node, std::int64_t h, std::int64_t w, std::int64_t kh, std::int64_t kw);

} // namespace tpumodel::cpu
