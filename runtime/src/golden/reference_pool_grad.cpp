// SPDX-License-Identifier: MIT
// reference_pool_grad.cpp - the pooling gradients on the CPU by plain loops over the windows (see
// train_compiler.hpp's PoolGradProblem), padding included.
#include "tpurt/golden/reference_pool_grad.hpp"
#include "tpurt/error.hpp"

#include <limits>
#include <string>

namespace tpurt {

std::vector<float> reference_pool_grad(const PoolGradProblem &p, std::span<const float> x,
                                       std::span<const float> y, std::span<const float> dy) {
    const std::size_t oh = p.out_height(), ow = p.out_width(), c = p.channels;
    const std::size_t in = std::size_t{p.batch} * p.height * p.width * c,
                      out = std::size_t{p.batch} * oh * ow * c;
    const bool max = p.op == PoolOp::Max;
    if (dy.size() != out || (max && (x.size() != in || y.size() != out)))
        throw Error(ErrorCode::InvalidArgument, "reference_pool_grad: x and dx need " +
                                                    std::to_string(in) + " values, y and dy " +
                                                    std::to_string(out));
    std::vector<float> dx(in, 0.0f);
    std::vector<bool> covered(in, false);
    constexpr float padding = -std::numeric_limits<float>::infinity(); // what MAX saw there
    for (std::size_t n = 0; n < p.batch; ++n)
        for (std::size_t oy = 0; oy < oh; ++oy)
            for (std::size_t ox = 0; ox < ow; ++ox)
                for (std::size_t ch = 0; ch < c; ++ch) {
                    const std::size_t o = ((n * oh + oy) * ow + ox) * c + ch;
                    bool taken = false;
                    for (std::size_t i = 0; i < p.window_h; ++i)
                        for (std::size_t j = 0; j < p.window_w; ++j) {
                            // The window's element in the image's coordinates, maybe padding.
                            const std::size_t iy = oy * p.stride_h + i - p.pad_h,
                                              ix = ox * p.stride_w + j - p.pad_w;
                            const bool inside = oy * p.stride_h + i >= p.pad_h &&
                                                ox * p.stride_w + j >= p.pad_w && iy < p.height &&
                                                ix < p.width;
                            const std::size_t at = ((n * p.height + iy) * p.width + ix) * c + ch;
                            float share = dy[o] / static_cast<float>(p.window_h * p.window_w);
                            if (max) {
                                const bool hit = !taken && (inside ? x[at] : padding) == y[o];
                                taken = taken || hit;
                                share = (hit ? 1.0f : 0.0f) * dy[o];
                            }
                            if (!inside)
                                continue; // the padding's share is dropped
                            dx[at] = (covered[at] ? dx[at] : -0.0f) + share;
                            covered[at] = true;
                        }
                }
    return dx;
}

} // namespace tpurt
