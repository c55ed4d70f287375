// SPDX-License-Identifier: MIT
// program_fusion.hpp - internal: the programs of a captured sequence of launches joined into as
// few jobs as the card's program size allows (tpurt::Graph, graph.hpp).
//
// Every job starts with the unified buffer and the accumulators zeroed and no weights loaded
// (docs/hardware.md section 6), and the compilers rely on that (zero padding, the constant 1 of
// ACTIVATE EXP on a zero accumulator, rows of zeros nothing writes). So where one program
// follows another inside a job, a reset restores that state: SYNC (as a job boundary, every
// earlier instruction finishes first), DMA_IN of zeros from host memory over the unified-buffer
// bytes the previous program may have written, and MATMULs of those zeros through a zero weight
// tile over the accumulator bytes it may have written. The extents come from the instructions'
// fields (conservatively: first row to last row of each write); what no earlier program wrote is
// still zero. Only the loaded weights differ from a fresh job: a zero tile instead of none, so a
// program that MATMULs before its own first LOAD_W (NO_WEIGHTS in a job of its own; no compiler
// of the runtime emits one) reads zeros instead of failing.
#pragma once

#include "tpurt/codegen/program_builder.hpp"
#include "tpurt/device_info.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tpurt::detail {

struct FusionTarget {
    ArrayLimits limits;
    DType zero_type = DType::Fp32; // a MATMUL type the card supports, for the accumulators' reset
    std::uint64_t zeros = 0;       // host address of limits.ub_bytes zero bytes (a placeholder)
    std::size_t max_program_bytes = TPU_PROGRAM_MAX_BYTES;
};

// The programs (each one job's, host addresses as link placeholders) joined in order into
// programs of at most max_program_bytes, a reset between two that share one. Each ends in HALT.
// Throws Error(Unsupported) for a program with SEND or RECV (collectives are not captured).
std::vector<Program> fuse_programs(std::span<const Program> programs, const FusionTarget &target);

} // namespace tpurt::detail
