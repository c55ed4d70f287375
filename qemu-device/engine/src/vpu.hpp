// SPDX-License-Identifier: MIT
// The vector unit: executes ACTIVATE, VECTOR, REDUCE, POOL and TRANSPOSE on the on-chip buffers
// (docs/hardware.md section 6 defines each exactly). Shared by both engine modes. Elements are
// processed one at a time in the documented order, each read from and written to the buffers
// directly, so operands that overlap behave the same in every implementation. Callers hold an
// FpEnvGuard; the decoder has range-checked every operand.
#pragma once

#include <cstdint>

#include "insn.hpp"

namespace tpu::engine::vpu {

void activate(const ActivateInsn &insn, const uint8_t *acc, uint8_t *ub);
void vector(const VectorInsn &insn, uint8_t *ub);
void reduce(const ReduceInsn &insn, uint8_t *ub);
void pool(const PoolInsn &insn, uint8_t *ub);
void transpose(const TransposeInsn &insn, uint8_t *ub);

} // namespace tpu::engine::vpu
