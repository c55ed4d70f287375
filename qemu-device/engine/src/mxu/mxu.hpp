// SPDX-License-Identifier: MIT
// FastMxu: the matrix unit's fast functional mode. Computes a MATMUL against a loaded
// WeightTile with the vectorised block kernels (register tiles over rows and columns), splitting
// the rows M (and the columns N when M is small) across a thread pool; or a sequence of
// MATMULs into the same accumulators block of rows by block of rows. Results are bit-identical
// to the cycle-accurate SystolicArray.
#pragma once

#include <atomic>

#include "mxu/kernels/kernels.hpp"
#include "mxu/mxu_types.hpp"
#include "mxu/weight_tile.hpp"
#include "thread_pool.hpp"

namespace tpu::engine {

class FastMxu {
  public:
    explicit FastMxu(ThreadPool &pool, const RowKernels &kernels = best_row_kernels())
        : pool_(pool), kernels_(kernels) {}

    // Runs args through tile (which must be loaded). Stops early between blocks once abort
    // is set and returns false then (some rows written, others not); true when complete.
    bool run(const WeightTile &tile, const MatmulArgs &args, const std::atomic<bool> &abort);

    // Runs a sequence of MATMULs over the same accumulator rows (the same rows, acc and
    // acc_stride in every args, no two rows overlapping; none against a one-column fp32 tile),
    // links[i] through tiles[i], block of rows by block of rows: every link over a block before
    // the next block, so that the block's accumulators stay in the core's cache instead of
    // each MATMUL going over all of them. Each output sees the links in order, as when they run
    // one by one. Stops early like run().
    bool run_sequence(const WeightTile *const *tiles, const MatmulArgs *links, uint32_t count,
                      const std::atomic<bool> &abort);

  private:
    ThreadPool &pool_;
    const RowKernels &kernels_;
    bool backwards_ = false; // the next MATMUL walks its blocks from the last
};

} // namespace tpu::engine
