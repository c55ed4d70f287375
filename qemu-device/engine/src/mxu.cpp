// SPDX-License-Identifier: MIT
// Fast functional MXU: row blocks of a MATMUL spread over the thread pool.
#include "mxu.hpp"

#include <algorithm>

#include "fp_env.hpp"

namespace tpu::engine {
namespace {

constexpr uint32_t kRowsPerBlock = 16;
// Below this many multiply-accumulates a MATMUL runs on the calling thread alone.
constexpr uint64_t kParallelMinMacs = 1u << 16;

} // namespace

bool FastMxu::run(const WeightTile &tile, const MatmulArgs &args, const std::atomic<bool> &abort) {
    const uint32_t k = tile.k();
    const uint32_t n = tile.n();
    const RowKernel kernel = tile.type() == MxuType::Int8 ? kernels_.int8 : kernels_.bf16;
    const uint32_t blocks = (args.rows + kRowsPerBlock - 1) / kRowsPerBlock;

    auto run_block = [&](uint32_t block) {
        if (abort.load(std::memory_order_relaxed))
            return;
        FpEnvGuard fp_env;
        uint32_t end = std::min(args.rows, (block + 1) * kRowsPerBlock);
        for (uint32_t m = block * kRowsPerBlock; m < end; m++)
            kernel(tile.words(), k, n, args.src + m * args.src_stride,
                   args.acc + m * args.acc_stride, args.accumulate);
    };

    // Rows whose accumulators overlap (stride below a row) are defined to run in ascending m,
    // so they stay on one thread, as do small multiplies where hand-off costs more than it saves.
    bool rows_overlap = args.rows > 1 && args.acc_stride < 4 * uint64_t(n);
    uint64_t macs = uint64_t(args.rows) * k * n;
    if (pool_.size() == 1 || rows_overlap || macs < kParallelMinMacs) {
        for (uint32_t b = 0; b < blocks; b++)
            run_block(b);
    } else {
        pool_.parallel_for(blocks, run_block);
    }
    return !abort.load(std::memory_order_relaxed);
}

} // namespace tpu::engine
