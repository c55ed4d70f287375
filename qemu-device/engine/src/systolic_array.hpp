// SPDX-License-Identifier: MIT
// SystolicArray: cycle-accurate model of the weight-stationary matrix unit, for tests and for
// checking the fast mode. Every processing element PE(k, n) holds W[k][n] and, each cycle,
// latches the activation arriving from its left neighbour and the partial sum arriving from the
// PE above, and computes psum' = psum + a * w (fmaf for bf16 and fp32, wrapping int32 for int8).
// Activation row m enters array row k at cycle m + k (skewed), so it meets PE(k, n) at cycle
// m + k + n; the starting accumulator value of (m, n) enters the top of column n at cycle m + n
// and the finished sum leaves the bottom of column n one cycle after PE(K-1, n) computed it.
// Only the K x N PEs of the loaded tile take part; the others are bypassed.
#pragma once

#include <cstdint>
#include <vector>

#include "mxu_types.hpp"
#include "weight_tile.hpp"

namespace tpu::engine {

class SystolicArray {
  public:
    SystolicArray(uint32_t rows, uint32_t cols);

    // The tile passed to load_weights() must fit: K <= rows, N <= cols.

    // Shifts the tile in from the top edge, one row per cycle (row K-1 first), until PE(k, n)
    // holds W[k][n]. Returns the cycles taken: K.
    uint64_t load_weights(const WeightTile &tile);

    // Streams args.rows activation rows through the loaded tile, cycle by cycle, writing the
    // results as they drain (NaN as kCanonicalNan). Returns the cycles from the first
    // activation entering to the last result written: M + K + N - 1. Accumulator rows that
    // overlap (acc_stride < 4 N) depend on each other, so then each row makes its own pass,
    // in ascending m: M x (K + N) cycles.
    uint64_t run(const MatmulArgs &args);

  private:
    struct Pe {
        uint32_t weight = 0; // int32 or fp32 bit pattern
        uint32_t act = 0;    // activation latched this cycle (widened like the weight)
        uint32_t psum = 0;   // partial sum computed this cycle
        bool valid = false;  // act and psum belong to a row in flight
    };

    uint64_t run_pass(const MatmulArgs &args);
    template <class Mac> uint64_t run_with(const MatmulArgs &args);
    Pe &pe(std::vector<Pe> &grid, uint32_t k, uint32_t n) { return grid[uint64_t(k) * cols_ + n]; }

    uint32_t cols_;
    MxuType type_ = MxuType::Int8;
    uint32_t k_ = 0; // loaded tile
    uint32_t n_ = 0;
    std::vector<Pe> grid_; // state after the last cycle
    std::vector<Pe> next_; // state being computed
};

} // namespace tpu::engine
