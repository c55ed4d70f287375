// SPDX-License-Identifier: MIT
// layer_norm_compiler.hpp - layer normalisation over the last dimension of an fp32 matrix and
// its gradient as card programs (spec 1.4: VECTOR with per-row broadcasts, REDUCE, TRANSPOSE,
// ACTIVATE RSQRT through the 1 x 1 weight of train_compiler.hpp's programs). Pure functions of
// shapes, addresses and the card's limits; whole rows are kept in the unified buffer.
//
// The arithmetic, each step one binary32 operation (what a reference must follow bit for bit),
// per row r of x [rows, cols], with inv = 1.0f / cols and sums in ascending column order:
//   mean = sum(x) * inv; d = x - mean; var = sum(d * d) * inv; rstd = 1 / sqrt(var + eps)
//   (RSQRT: two rounded operations); xh = d * rstd; y = xh * gamma + beta (two roundings).
// The backward pass recomputes xh from x, then with g = dy * gamma:
//   a = sum(g) * inv; b = sum(g * xh) * inv; dx = ((g - a) - xh * b) * rstd;
//   dgamma[c] = 0 + p[0][c] + p[1][c] + ... (rows ascending, p = dy * xh); dbeta likewise of dy.
// The column sums run over all rows in order across tiles: each tile transposes its products
// behind the running total (read back from dgamma / dbeta) and REDUCEs the rows of that.
#pragma once

#include "tpurt/codegen/program_builder.hpp"
#include "tpurt/device_info.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tpurt {

struct LayerNormProblem {
    bool backward = false;
    std::uint32_t rows = 0, cols = 0;
    float eps = 1e-5f;
    // Both passes read x and gamma; the forward pass beta and writes y; the backward pass
    // reads dy and writes dx, dgamma and dbeta (cols each).
    std::uint64_t x_addr = 0, gamma_addr = 0, beta_addr = 0, y_addr = 0;
    std::uint64_t dy_addr = 0, dx_addr = 0, dgamma_addr = 0, dbeta_addr = 0;
};

// Rows of a tile (the programs' unit): as many whole rows as the unified buffer holds.
// 0 if one row does not fit.
std::uint32_t layer_norm_tile_rows(const LayerNormProblem &problem, const ArrayLimits &limits);

std::vector<Program> compile_layer_norm(const LayerNormProblem &problem, const ArrayLimits &limits,
                                        std::size_t max_program_bytes = TPU_PROGRAM_MAX_BYTES);

} // namespace tpurt
