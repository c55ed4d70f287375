// SPDX-License-Identifier: MIT
// The vector unit: executes ACTIVATE, VECTOR, REDUCE, POOL and TRANSPOSE on the on-chip buffers
// (docs/hardware.md section 6 defines each exactly). Shared by both engine modes. Elements are
// processed one at a time in the documented order, each read from and written to the buffers
// directly, so operands that overlap behave the same in every implementation. Callers hold an
// FpEnvGuard; the decoder has range-checked every operand and applied the work limit.
//
// Each returns false if it stopped early because abort was set: checked before every row (POOL:
// every output element, or every 64 channels of an output pixel for FP32/BF16 with source and
// destination apart), so a stop comes after at most 65535 elements (POOL: 64 windows); an
// instruction split over the thread pool checks before each task of at most 16384 elements.
#pragma once

#include <atomic>
#include <cstdint>

#include "isa/insn.hpp"
#include "thread_pool.hpp"

namespace tpu::engine::vpu {

// activate, vector and transpose spread a large instruction over pool when its results are
// independent (vpu_split.hpp; nullptr: all on the calling thread).
bool activate(const ActivateInsn &insn, const uint8_t *acc, uint8_t *ub,
              const std::atomic<bool> &abort, ThreadPool *pool = nullptr);
bool vector(const VectorInsn &insn, uint8_t *ub, const std::atomic<bool> &abort,
            ThreadPool *pool = nullptr);
bool reduce(const ReduceInsn &insn, uint8_t *ub, const std::atomic<bool> &abort);
bool pool(const PoolInsn &insn, uint8_t *ub, const std::atomic<bool> &abort);
bool transpose(const TransposeInsn &insn, uint8_t *ub, const std::atomic<bool> &abort,
               ThreadPool *pool = nullptr);

} // namespace tpu::engine::vpu
