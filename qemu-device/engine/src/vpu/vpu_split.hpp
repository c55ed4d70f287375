// SPDX-License-Identifier: MIT
// The vector unit's large element-wise instructions spread over the engine's thread pool: the
// rows x cols elements cut into tasks of about kSplitElements (whole rows when a row is short,
// else column ranges of one row, multiples of 256 elements), each run with the card's
// floating-point environment and skipped once an abort is requested. Only for instructions whose
// every result depends on its own operands alone (the caller checks the overlaps), so the order
// of the tasks cannot change a bit of the result.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "fp_env.hpp"
#include "thread_pool.hpp"

namespace tpu::engine::vpu {

// Elements of one task; an instruction with fewer than two tasks' worth runs on the caller.
constexpr uint64_t kSplitElements = 16384;

// Whether spreading rows x cols elements over pool is worth a hand-off.
inline bool worth_splitting(const ThreadPool *pool, uint64_t rows, uint64_t cols) {
    return pool && pool->size() > 1 && rows * cols >= 2 * kSplitElements;
}

// Runs body(r0, r1, c0, c1) (rows [r0, r1), columns [c0, c1)) over every task of rows x cols on
// pool; returns false if an abort was requested (some tasks then did not run).
template <class Body>
bool run_split(ThreadPool &pool, const std::atomic<bool> &abort, uint64_t rows, uint64_t cols,
               Body body) {
    const uint64_t col_span = std::min(cols, kSplitElements);
    const uint64_t col_pieces = (cols + col_span - 1) / col_span;
    const uint64_t row_span = col_pieces == 1 ? std::max<uint64_t>(1, kSplitElements / cols) : 1;
    const uint64_t tasks = (rows + row_span - 1) / row_span * col_pieces;
    auto task = [&](uint32_t i) {
        if (abort.load(std::memory_order_relaxed))
            return;
        FpEnvGuard fp_env;
        const uint64_t r0 = i / col_pieces * row_span, c0 = i % col_pieces * col_span;
        body(r0, std::min(rows, r0 + row_span), c0, std::min(cols, c0 + col_span));
    };
    pool.parallel_for(uint32_t(tasks), task);
    return !abort.load(std::memory_order_relaxed);
}

} // namespace tpu::engine::vpu
