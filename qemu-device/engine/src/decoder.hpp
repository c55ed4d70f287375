// SPDX-License-Identifier: MIT
// Instruction decoder: validates one raw 32-byte instruction against the card's limits and turns
// it into a typed instruction. Everything that can be checked without job state is checked here
// (opcode, dtype, flags, reserved fields, shapes, alignment, unified-buffer and accumulator
// ranges); the executor adds the checks that need the loaded weights.
#pragma once

#include <cstdint>
#include <variant>

#include "extent.hpp"
#include "fault.hpp"
#include "mxu_types.hpp"
#include "tpu_hw.h"

namespace tpu::engine {

struct DecoderLimits {
    uint32_t mxu_rows;
    uint32_t mxu_cols;
    uint32_t ub_bytes;
    uint32_t acc_bytes;
};

struct NopInsn {};
struct HaltInsn {};

// DMA_IN (host -> UB) or DMA_OUT (UB or ACC -> host).
struct DmaInsn {
    bool to_host = false;  // DMA_OUT
    bool from_acc = false; // DMA_OUT with TPU_F_SRC_ACC
    uint32_t rows = 0;
    uint64_t row_bytes = 0;
    uint64_t host_addr = 0;
    uint64_t host_stride = 0;
    Extent2D local; // range-checked against UB or ACC

    uint64_t bytes() const { return rows * row_bytes; }
};

struct LoadWInsn {
    MxuType type = MxuType::Int8;
    uint32_t k = 0; // rows of the tile
    uint32_t n = 0; // columns of the tile
    Extent2D src;   // range-checked against UB
};

struct MatmulInsn {
    MxuType type = MxuType::Int8;
    uint32_t m = 0;
    uint32_t k = 0;
    bool accumulate = false;
    Extent2D src;          // range-checked against UB
    uint64_t acc_addr = 0; // aligned; range depends on the loaded N (executor)
    uint64_t acc_stride = 0;
};

using Insn = std::variant<NopInsn, HaltInsn, DmaInsn, LoadWInsn, MatmulInsn>;

// Decodes raw into *out. Faults: TPU_ERR_BAD_OPCODE, TPU_ERR_BAD_OPERAND (fault address 0),
// TPU_ERR_UB_RANGE / TPU_ERR_ACC_RANGE (fault address = lowest offending offset).
Fault decode(const tpu_insn &raw, const DecoderLimits &limits, Insn *out);

} // namespace tpu::engine
