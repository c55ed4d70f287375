// SPDX-License-Identifier: MIT
// pool_grad_compiler.cpp - the gradient of k x k, stride k pooling as card programs (see
// train_compiler.hpp). Per output row (n, oy): DMA_IN its dy (and y) row of OW x C values; for
// each window offset (i, j) in row-major order, a strided DMA_IN gathers x[n][oy k + i][j::k]
// (OW pixels of C values) and a strided DMA_OUT scatters that offset's gradient back: for MAX
// hit = (x == y) x avail, avail = avail - hit, dx = hit x dy (avail starts at 1, so only the
// first match of a window gets dy); for AVG dx = dy / (k k). Bf16 operands are widened on the
// way in and rounded on the way out (train_block.hpp's Staging, after the five fp32 rows).
#include "tpurt/error.hpp"
#include "tpurt/train_compiler.hpp"
#include "train_block.hpp"

#include <string>

namespace tpurt {

using namespace train_detail;

std::vector<Program> compile_pool_grad(const PoolGradProblem &p, const ArrayLimits &limits,
                                       std::size_t max_program_bytes) {
    const std::string name = p.op == PoolOp::Max ? "max pool gradient" : "average pool gradient";
    const std::uint32_t k = p.window;
    if (p.batch == 0 || p.height == 0 || p.width == 0 || p.channels == 0 || k == 0 ||
        p.height % k != 0 || p.width % k != 0)
        throw Error(ErrorCode::InvalidArgument,
                    name +
                        ": non-empty images whose height and width are multiples of the window " +
                        std::to_string(k) + " are needed (windows of k x k at stride k)");
    const std::uint32_t x_size = float_operand(name, "x", p.x_type),
                        dy_size = float_operand(name, "dy", p.dy_type),
                        dx_size = float_operand(name, "dx", p.dx_type);
    const std::uint32_t staged = staging_bytes({p.x_type, p.dy_type, p.dx_type});
    const std::uint32_t oh = p.height / k, ow = p.width / k, c = p.channels;
    const std::uint64_t row = std::uint64_t{ow} * c; // values of one output row
    if (row > max_dim || data_ub + (5 * 4 + staged) * row > limits.ub_bytes ||
        4 * row > limits.acc_bytes)
        unsupported(name + " over rows of " + std::to_string(row) + " values", limits);
    const auto n = static_cast<std::uint32_t>(row);
    const std::uint32_t y = data_ub, a = y + 8 * n, x = a + 4 * n, h = x + 4 * n;
    const Staging staging{.zeros = h + 4 * n, .capacity = n};
    const std::uint64_t pixels_per_row = p.width;
    Splitter programs(max_program_bytes);
    for (std::uint32_t img = 0; img < p.batch; ++img) {
        for (std::uint32_t oy = 0; oy < oh; ++oy) {
            const std::uint64_t out_at = (std::uint64_t{img} * oh + oy) * row;
            std::uint32_t d = y + 4 * n; // dy, or (AVG, bf16 dx) its share rounded
            Block b;
            b.load_typed(p.dy_type, p.dy_addr + out_at * dy_size, d, 1, n, staging);
            if (p.op == PoolOp::Max) {
                b.load_typed(p.x_type, p.y_addr + out_at * x_size, y, 1, n, staging);
                b.fill(1.0f, a, n);
            } else {
                b.fill(static_cast<float>(k * k), a, n);
                b.vec(VectorOp::Div, d, a, d, 1, n); // dy / (k k)
                if (p.dx_type == DType::Bf16) {      // rounded once for the k k offsets
                    b.round_to_bf16(d, staging.row(), n);
                    d = staging.row();
                }
            }
            for (std::uint32_t i = 0; i < k; ++i) {
                for (std::uint32_t j = 0; j < k; ++j) {
                    // Element index of x[img][oy k + i][j][0]; pixels k apart.
                    const std::uint64_t at =
                        ((std::uint64_t{img} * p.height + std::uint64_t{oy} * k + i) *
                             pixels_per_row +
                         j) *
                        c;
                    const std::uint64_t x_stride = std::uint64_t{k} * c * x_size,
                                        dx_stride = std::uint64_t{k} * c * dx_size;
                    if (p.op == PoolOp::Avg) {
                        b.scatter(p.dx_addr + at * dx_size, dx_stride, d, ow, c, p.dx_type);
                        continue;
                    }
                    b.gather_typed(p.x_type, p.x_addr + at * x_size, x_stride, x, ow, c, staging);
                    b.vec(VectorOp::Eq, x, y, h, 1, n);
                    b.vec(VectorOp::Mul, h, a, h, 1, n);
                    b.vec(VectorOp::Sub, a, h, a, 1, n);
                    b.vec(VectorOp::Mul, h, d, h, 1, n);
                    b.scatter_typed(p.dx_type, p.dx_addr + at * dx_size, dx_stride, h, ow, c,
                                    staging);
                }
            }
            programs.add(b.finish());
        }
    }
    return programs.finish();
}

} // namespace tpurt
