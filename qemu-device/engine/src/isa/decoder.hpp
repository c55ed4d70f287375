// SPDX-License-Identifier: MIT
// Instruction decoder: validates one raw 32-byte instruction against the card's limits and turns
// it into a typed instruction (insn.hpp). Everything that can be checked without job state is
// checked here (opcode, dtype, flags, reserved fields, shapes, alignment, unified-buffer and
// accumulator ranges); the executor adds the checks that need the loaded weights.
#pragma once

#include <cstdint>

#include "executor/fault.hpp"
#include "isa/insn.hpp"
#include "tpu_hw.h"

namespace tpu::engine {

struct DecoderLimits {
    uint32_t mxu_rows;
    uint32_t mxu_cols;
    uint32_t ub_bytes;
    uint32_t acc_bytes;
};

// Decodes raw into *out. Faults: TPU_ERR_BAD_OPCODE, TPU_ERR_BAD_OPERAND (fault address 0),
// TPU_ERR_UB_RANGE / TPU_ERR_ACC_RANGE (fault address = lowest offending offset of the first
// operand, in field order, that does not fit).
Fault decode(const tpu_insn &raw, const DecoderLimits &limits, Insn *out);

} // namespace tpu::engine
