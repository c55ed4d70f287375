// SPDX-License-Identifier: MIT
// FastMxu: the matrix unit's fast functional mode. Computes a MATMUL against a loaded
// WeightTile with the vectorised row kernels (vectors over n), splitting the rows M across a
// thread pool. Results are bit-identical to the cycle-accurate SystolicArray.
#pragma once

#include <atomic>

#include "mxu_kernels.hpp"
#include "mxu_types.hpp"
#include "thread_pool.hpp"
#include "weight_tile.hpp"

namespace tpu::engine {

class FastMxu {
  public:
    explicit FastMxu(ThreadPool &pool, const RowKernels &kernels = best_row_kernels())
        : pool_(pool), kernels_(kernels) {}

    // Runs args through tile (which must be loaded). Stops early between row blocks once abort
    // is set and returns false then (some rows written, others not); true when complete.
    bool run(const WeightTile &tile, const MatmulArgs &args, const std::atomic<bool> &abort);

  private:
    ThreadPool &pool_;
    const RowKernels &kernels_;
};

} // namespace tpu::engine
