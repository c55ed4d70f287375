// SPDX-License-Identifier: MIT
// The fast MXU's path for MATMULs against an fp32 weight tile of one column (K x 1), with which
// libtpurt's training ops move, scale and combine values in the accumulators (hundreds of rows
// of one column each, thousands of times per program): one fma chain per row in a plain loop,
// where the register-tile kernels would pack panels and run masked tiles of one column for
// every six rows.
#pragma once

#include "mxu/mxu_types.hpp"
#include "mxu/weight_tile.hpp"

namespace tpu::engine {

// Whether run_weight_column() computes MATMULs against tile.
inline bool is_weight_column(const WeightTile &tile) {
    return tile.type() == MxuType::Fp32 && tile.n() == 1;
}

// acc[m] = the fma chain over k ascending of a[m][k] * w[k] from accumulate ? acc[m] : +0, for
// m in ascending order (so overlapping accumulator rows see the rows before them, as the card
// defines), NaN stored as the canonical NaN: what every kernel set computes for such a tile.
// Runs in the card's floating-point environment (FpEnvGuard).
void run_weight_column(const WeightTile &tile, const MatmulArgs &args);

} // namespace tpu::engine
