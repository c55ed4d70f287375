// SPDX-License-Identifier: MIT
// layer_norm_compiler.cpp - layer normalisation and its gradient as card programs (see
// layer_norm_compiler.hpp): one tile of whole rows at a time, the row statistics by REDUCE and
// ACTIVATE (scale 1 / cols, RSQRT), the normalisation by VECTOR with per-row (B_COL) and
// per-column (first-row) broadcasts.
#include "tpurt/codegen/layer_norm_compiler.hpp"

#include "codegen/isa_limits.hpp"
#include "codegen/program_splitter.hpp"
#include "codegen/train_block.hpp"
#include "tpurt/error.hpp"

#include <algorithm>
#include <string>

namespace tpurt {

using namespace train_detail;

namespace {

// Unified-buffer floats a tile of `rows` needs: rows x cols operands, cols-sized vectors and
// per-row values.
std::uint64_t tile_floats(bool backward, std::uint64_t rows, std::uint64_t cols) {
    const std::uint64_t n = rows * cols;
    return backward ? 4 * n + 3 * cols + 5 * rows : 2 * n + 2 * cols + 3 * rows;
}

// The unified-buffer layout of a tile of `rows` (byte addresses).
struct Layout {
    std::uint32_t x, d, gamma, beta, s, mean, rstd, g, aug, total, sg, sgx;
};

Layout layout_of(std::uint32_t rows, std::uint32_t cols) {
    const std::uint32_t n = rows * cols;
    Layout l{};
    l.x = data_ub;
    l.d = l.x + 4 * n;
    l.gamma = l.d + 4 * n;
    l.s = l.gamma + 4 * cols;
    l.mean = l.s + 4 * rows;
    l.rstd = l.mean + 4 * rows;
    l.beta = l.rstd + 4 * rows; // forward only
    l.g = l.beta;               // backward only, from here on
    l.aug = l.g + 4 * n;
    l.total = l.aug + 4 * (n + cols);
    l.sg = l.total + 4 * cols;
    l.sgx = l.sg + 4 * rows;
    return l;
}

// total[c] = total[c] + sum over the tile's rows of p[r][c] (rows ascending), in host memory at
// `host`; the first tile starts the total at +0.
void column_sums(Block &b, const Layout &l, std::uint32_t p, std::uint64_t host, bool first,
                 std::uint32_t rows, std::uint32_t cols) {
    if (first)
        b.fill(0.0f, l.total, cols);
    else
        b.load(host, l.total, 1, cols);
    const std::uint32_t stride = (rows + 1) * 4;
    b.transpose(l.total, l.aug, 1, cols, stride);
    b.transpose(p, l.aug + 4, rows, cols, stride);
    b.reduce(ReduceOp::Sum, l.aug, l.total, cols, rows + 1);
    b.store(host, l.total, 1, cols);
}

} // namespace

std::uint32_t layer_norm_tile_rows(const LayerNormProblem &p, const ArrayLimits &limits) {
    if (p.rows == 0 || p.cols == 0 || p.cols > max_dim ||
        std::uint64_t{p.cols} * 4 > limits.acc_bytes)
        return 0;
    const std::uint64_t ub = limits.ub_bytes > data_ub ? (limits.ub_bytes - data_ub) / 4 : 0;
    const std::uint64_t fixed = tile_floats(p.backward, 0, p.cols);
    if (ub <= fixed)
        return 0;
    const std::uint64_t per_row = tile_floats(p.backward, 1, p.cols) - fixed;
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(
        {p.rows, (ub - fixed) / per_row, max_dim - 1, limits.acc_bytes / 4}));
}

std::vector<Program> compile_layer_norm(const LayerNormProblem &p, const ArrayLimits &limits,
                                        std::size_t max_program_bytes) {
    const std::string name = p.backward ? "layer_norm_grad" : "layer_norm";
    if (p.rows == 0 || p.cols == 0)
        throw Error(ErrorCode::InvalidArgument, name + " of " + std::to_string(p.rows) + " x " +
                                                    std::to_string(p.cols) +
                                                    ": dimensions must be non-zero");
    const std::uint32_t tile = layer_norm_tile_rows(p, limits);
    if (tile == 0)
        unsupported(name + " over rows of " + std::to_string(p.cols), limits);
    const std::uint32_t cols = p.cols;
    const float inv = 1.0f / static_cast<float>(cols);
    ProgramSplitter programs(max_program_bytes, start_program());
    for (std::uint32_t r0 = 0; r0 < p.rows; r0 += tile) {
        const std::uint32_t rows = std::min(tile, p.rows - r0);
        const Layout l = layout_of(rows, cols);
        const std::uint64_t at = std::uint64_t{r0} * cols * 4;
        Block b;
        b.load(p.x_addr + at, l.x, rows, cols);
        b.load(p.gamma_addr, l.gamma, 1, cols);
        b.reduce(ReduceOp::Sum, l.x, l.s, rows, cols);
        b.apply(Activation::None, inv, l.s, l.mean, rows);
        b.vec(VectorOp::Sub, l.x, l.mean, l.d, rows, cols, Bcast::Column); // d
        b.vec(VectorOp::Mul, l.d, l.d, l.x, rows, cols);
        b.reduce(ReduceOp::Sum, l.x, l.s, rows, cols);
        b.apply(Activation::None, inv, l.s, l.s, rows); // var
        b.constant(p.eps, const_ub);
        b.vec(VectorOp::Add, l.s, const_ub, l.s, 1, rows, Bcast::Scalar);
        b.apply(Activation::Rsqrt, 1.0f, l.s, l.rstd, rows);
        b.vec(VectorOp::Mul, l.d, l.rstd, l.d, rows, cols, Bcast::Column); // xh
        if (!p.backward) {
            b.load(p.beta_addr, l.beta, 1, cols);
            b.vec(VectorOp::Mul, l.d, l.gamma, l.d, rows, cols, Bcast::Row);
            b.vec(VectorOp::Add, l.d, l.beta, l.d, rows, cols, Bcast::Row);
            b.store(p.y_addr + at, l.d, rows, cols);
            programs.add(b.finish());
            continue;
        }
        b.load(p.dy_addr + at, l.g, rows, cols);
        column_sums(b, l, l.g, p.dbeta_addr, r0 == 0, rows, cols);
        b.vec(VectorOp::Mul, l.g, l.d, l.x, rows, cols); // dy xh
        column_sums(b, l, l.x, p.dgamma_addr, r0 == 0, rows, cols);
        b.vec(VectorOp::Mul, l.g, l.gamma, l.g, rows, cols, Bcast::Row); // g
        b.reduce(ReduceOp::Sum, l.g, l.sg, rows, cols);
        b.vec(VectorOp::Mul, l.g, l.d, l.x, rows, cols);
        b.reduce(ReduceOp::Sum, l.x, l.sgx, rows, cols);
        b.apply(Activation::None, inv, l.sg, l.sg, rows);   // a
        b.apply(Activation::None, inv, l.sgx, l.sgx, rows); // b
        b.vec(VectorOp::Mul, l.d, l.sgx, l.x, rows, cols, Bcast::Column);
        b.vec(VectorOp::Sub, l.g, l.sg, l.g, rows, cols, Bcast::Column);
        b.vec(VectorOp::Sub, l.g, l.x, l.g, rows, cols);
        b.vec(VectorOp::Mul, l.g, l.rstd, l.g, rows, cols, Bcast::Column);
        b.store(p.dx_addr + at, l.g, rows, cols);
        programs.add(b.finish());
    }
    return programs.finish();
}

} // namespace tpurt
