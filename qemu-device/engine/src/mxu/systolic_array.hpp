// SPDX-License-Identifier: MIT
// SystolicArray: cycle-accurate model of the weight-stationary matrix unit, for tests and for
// checking the fast mode. Every processing element PE(k, n) holds W[k][n] and, each cycle,
// latches the activation arriving from its left neighbour and the partial sum arriving from the
// PE above, and computes psum' = psum + a * w (fmaf for fp32, wrapping int32 for int8). For bf16
// each column carries three values down (the card's bf16 numerics, mxu/bf16_numerics.hpp): the
// accumulator lane and the block's two chains E and O. Array row k belongs to the block of rows
// 32 * floor(k / 32) .. 32 * floor(k / 32) + 31 (cut short by K); at the block's first row
// both chains enter as +0, row k steps chain k mod 2 with its product (the other chain passes
// down unchanged), and the block's last row merges the chains into the accumulator lane:
// psum' = add(psum, add(E, O)); every other row passes the accumulator lane down unchanged.
// Partial sums still move down one row per cycle, so the timing is the same for every type.
// Activation row m enters array row k at cycle m + k (skewed), so it meets PE(k, n) at cycle
// m + k + n; the starting accumulator value of (m, n) enters the top of column n at cycle m + n
// and the finished sum leaves the bottom of column n one cycle after PE(K-1, n) computed it.
// Only the K x N PEs of the loaded tile take part; the others are bypassed.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

#include "mxu/mxu_types.hpp"
#include "mxu/weight_tile.hpp"

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
    // in ascending m: M x (K + N) cycles. If abort is given and becomes true, stops within a
    // few hundred cycles and returns nullopt; the accumulators then hold partial results.
    std::optional<uint64_t> run(const MatmulArgs &args, const std::atomic<bool> *abort = nullptr);

  private:
    struct Pe {
        uint32_t weight = 0; // int32 or fp32 bit pattern
        uint32_t act = 0;    // activation latched this cycle (widened like the weight)
        uint32_t psum = 0;   // partial sum (bf16: the accumulator lane) computed this cycle
        float chain[2] = {}; // bf16: the block's chains E and O leaving this PE
        bool valid = false;  // act and psum belong to a row in flight
    };

    std::optional<uint64_t> run_pass(const MatmulArgs &args, const std::atomic<bool> *abort);
    template <class Mac>
    std::optional<uint64_t> run_with(const MatmulArgs &args, const std::atomic<bool> *abort);
    Pe &pe(std::vector<Pe> &grid, uint32_t k, uint32_t n) { return grid[uint64_t(k) * cols_ + n]; }

    uint32_t cols_;
    MxuType type_ = MxuType::Int8;
    uint32_t k_ = 0; // loaded tile
    uint32_t n_ = 0;
    std::vector<Pe> grid_; // state after the last cycle
    std::vector<Pe> next_; // state being computed
};

} // namespace tpu::engine
