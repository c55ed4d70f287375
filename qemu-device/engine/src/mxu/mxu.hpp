// SPDX-License-Identifier: MIT
// FastMxu: the matrix unit's fast functional mode. Computes a MATMUL against a loaded
// WeightTile with the vectorised block kernels (register tiles over rows and columns), splitting
// the rows M (and the columns N when M is small) across a thread pool. Results are bit-identical
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

  private:
    ThreadPool &pool_;
    const RowKernels &kernels_;
    bool backwards_ = false; // the next MATMUL walks its blocks from the last
};

} // namespace tpu::engine
