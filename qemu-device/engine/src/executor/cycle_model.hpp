// SPDX-License-Identifier: MIT
// The card's cycle model: how many cycles each instruction keeps its unit busy (docs/hardware.md,
// "Cycle model"). The Timeline (timeline.hpp) places these costs on the units and adds the waits
// for dependencies; SystolicArray (the cycle-accurate model) takes exactly the MATMUL cycles.
//
//   NOP, HALT, SYNC, TIMESTAMP  1 cycle (issue), on no unit
//   DMA_IN, DMA_OUT             ceil(bytes * clock_mhz / dma_mbps) on the DMA unit
//   LOAD_W                      K cycles on the weight loader (the tile shifts in a row per
//                               cycle), plus the DMA cost of its bytes when it comes from host
//                               memory (then both units are busy for the sum)
//   MATMUL                      M + K + N - 1 on the MXU: row m enters array row k at cycle
//                               m + k, meets column n at m + k + n and leaves one cycle later;
//                               rows with overlapping accumulators pass one at a time:
//                               M * (K + N)
//   ACTIVATE, VECTOR, TRANSPOSE ceil(rows * cols / 128) on the VPU (128 lanes)
//   REDUCE                      ceil(rows * cols / 128) (the input elements)
//   POOL                        ceil(OH * OW * channels * win_h * win_w / 128)
#pragma once

#include <cstdint>

namespace tpu::engine::cycles {

inline constexpr uint64_t kIssue = 1;
inline constexpr uint32_t kDefaultDmaMbps = 44800;
inline constexpr uint64_t kVpuLanes = 128;

// bytes moved between host memory and the card at dma_mbps (MB/s) with a clock_mhz clock.
inline constexpr uint64_t dma(uint64_t bytes, uint32_t clock_mhz, uint32_t dma_mbps) {
    unsigned __int128 scaled = (unsigned __int128)bytes * clock_mhz;
    return uint64_t((scaled + dma_mbps - 1) / dma_mbps);
}
inline constexpr uint64_t load_w(uint32_t k) {
    return k;
}
inline constexpr uint64_t matmul(uint32_t m, uint32_t k, uint32_t n, bool rows_overlap = false) {
    return rows_overlap ? uint64_t(m) * (uint64_t(k) + n) : uint64_t(m) + k + n - 1;
}
inline constexpr uint64_t vpu(uint64_t elements) {
    return (elements + kVpuLanes - 1) / kVpuLanes;
}

} // namespace tpu::engine::cycles
