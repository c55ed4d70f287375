// SPDX-License-Identifier: MIT
// Fast functional MXU: a MATMUL cut into blocks of rows x columns spread over the thread pool.
#include "mxu/mxu.hpp"

#include <algorithm>

#include "fp_env.hpp"
#include "mxu/weight_column.hpp"

namespace tpu::engine {
namespace {

// A block: up to the kernel set's block rows (RowKernels::block_rows()) by all columns, or by
// kBlockCols columns when there are too few row blocks to keep every thread busy.
constexpr uint32_t kBlockCols = 64;
constexpr uint32_t kBlocksPerThread = 4;
// Below this many multiply-accumulates a MATMUL runs on the calling thread alone, where
// hand-off costs more than it saves.
constexpr uint64_t kParallelMinMacs = 1u << 16;
// Accumulator bytes of a block of rows of a sequence: well inside a core's L2.
constexpr uint64_t kSequenceBlockBytes = 64u << 10;

} // namespace

bool FastMxu::run(const WeightTile &tile, const MatmulArgs &args, const std::atomic<bool> &abort) {
    const uint32_t n = tile.n();
    const BlockKernel kernel = kernels_.for_type(tile.type());

    if (is_weight_column(tile)) {
        FpEnvGuard fp_env;
        run_weight_column(tile, args);
        return true;
    }

    // Rows whose accumulators overlap (stride below a row) are defined to run in ascending m,
    // one after the other, on this thread.
    if (args.rows > 1 && args.acc_stride < 4 * uint64_t(n)) {
        FpEnvGuard fp_env;
        for (uint32_t m = 0; m < args.rows; m++) {
            if (abort.load(std::memory_order_relaxed))
                return false;
            kernel(tile, args, m, m + 1, 0, n);
        }
        return true;
    }

    const uint32_t threads = pool_.size();
    const uint32_t block_rows = kernels_.block_rows(tile.type(), tile.k(), n);
    const uint32_t row_blocks = (args.rows + block_rows - 1) / block_rows;
    uint32_t col_blocks = 1;
    if (threads > 1 && row_blocks < kBlocksPerThread * threads)
        col_blocks = std::max(1u, n / kBlockCols);
    const uint32_t cols_per_block = (n + col_blocks - 1) / col_blocks;
    const uint32_t blocks = row_blocks * col_blocks;

    // Every other MATMUL walks its blocks from the last: the MATMULs of a tiled matmul go over
    // the same accumulator rows, and those the previous one touched last are still cached.
    const bool backwards = backwards_;
    backwards_ = !backwards_;

    auto run_block = [&](uint32_t index) {
        if (abort.load(std::memory_order_relaxed))
            return;
        FpEnvGuard fp_env;
        const uint32_t block = backwards ? blocks - 1 - index : index;
        const uint32_t m0 = block / col_blocks * block_rows;
        const uint32_t n0 = block % col_blocks * cols_per_block;
        kernel(tile, args, m0, std::min(args.rows, m0 + block_rows), n0,
               std::min(n, n0 + cols_per_block));
    };

    const uint64_t macs = uint64_t(args.rows) * tile.k() * n;
    if (threads == 1 || macs < kParallelMinMacs) {
        for (uint32_t b = 0; b < blocks; b++)
            run_block(b);
    } else {
        pool_.parallel_for(blocks, run_block);
    }
    return !abort.load(std::memory_order_relaxed);
}

bool FastMxu::run_sequence(const WeightTile *const *tiles, const MatmulArgs *links, uint32_t count,
                           const std::atomic<bool> &abort) {
    const uint32_t n = tiles[0]->n();
    const uint32_t rows = links[0].rows;
    const uint32_t step = kernels_.block_rows(tiles[0]->type(), tiles[0]->k(), n);
    const uint32_t block_rows =
        std::max<uint32_t>(step, uint32_t(kSequenceBlockBytes / (4 * uint64_t(n))) / step * step);
    const uint32_t blocks = (rows + block_rows - 1) / block_rows;
    uint64_t macs = 0;
    for (uint32_t i = 0; i < count; i++)
        macs += uint64_t(rows) * tiles[i]->k() * n;

    auto run_block = [&](uint32_t block) {
        if (abort.load(std::memory_order_relaxed))
            return;
        FpEnvGuard fp_env;
        const uint32_t m0 = block * block_rows;
        const uint32_t m1 = std::min(rows, m0 + block_rows);
        for (uint32_t i = 0; i < count; i++)
            kernels_.for_type(tiles[i]->type())(*tiles[i], links[i], m0, m1, 0, n);
    };
    if (pool_.size() == 1 || macs < kParallelMinMacs) {
        for (uint32_t b = 0; b < blocks; b++)
            run_block(b);
    } else {
        pool_.parallel_for(blocks, run_block);
    }
    return !abort.load(std::memory_order_relaxed);
}

} // namespace tpu::engine
