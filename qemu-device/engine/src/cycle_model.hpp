// SPDX-License-Identifier: MIT
// The card's cycle model: modelled cycles per instruction, reported per job (tpu_job_result
// cycles / mxu_busy_cycles) and summed into the device's counters. Instructions run strictly
// one after another (no overlap), so a job's cycles are the sum over its instructions:
//
//   NOP, HALT          1 cycle (issue)
//   DMA_IN, DMA_OUT    ceil(bytes / 64) cycles: a 64-byte-per-cycle host interface, where
//                      bytes = rows * cols * element size
//   LOAD_W             K cycles: the K x N tile shifts into the array one row per cycle
//   MATMUL             M + K + N - 1 cycles: row m enters array row k at cycle m + k, meets
//                      column n at m + k + n and leaves the bottom one cycle later, so the
//                      last result (M-1, N-1) is out after M + K + N - 1 cycles; all of them
//                      count as MXU busy cycles
//
// Program fetch and page-table walks are not modelled (free). An instruction that fails adds
// no cycles. The cycles do not depend on the clock; clock_mhz only converts them to time.
// SystolicArray (the cycle-accurate model) takes exactly these LOAD_W and MATMUL cycles.
#pragma once

#include <cstdint>

namespace tpu::engine::cycles {

inline constexpr uint64_t kIssue = 1;
inline constexpr uint64_t kDmaBytesPerCycle = 64;

inline constexpr uint64_t dma(uint64_t bytes) {
    return (bytes + kDmaBytesPerCycle - 1) / kDmaBytesPerCycle;
}
inline constexpr uint64_t load_w(uint32_t k) {
    return k;
}
inline constexpr uint64_t matmul(uint32_t m, uint32_t k, uint32_t n) {
    return uint64_t(m) + k + n - 1;
}

} // namespace tpu::engine::cycles
