// SPDX-License-Identifier: MIT
// program_fusion.hpp - internal: the programs of a captured sequence of launches joined into as
// few jobs as the card's program size allows (tpurt::Graph, graph.hpp).
//
// Every job starts with the unified buffer and the accumulators zeroed and no weights loaded
// (docs/hardware.md section 6), and the compilers rely on that (zero padding, the constant 1 of
// ACTIVATE EXP on a zero accumulator, rows of zeros nothing writes). So where one program
// follows another inside a job, a reset restores what the later program can see of that state:
// SYNC (as a job boundary: every earlier instruction finishes first), then zeros over the bytes
// of the unified buffer and of the accumulators that the later program reads before it has
// written them and that an earlier program of the job may have written (int32 VECTOR x - x in
// the unified buffer; MATMULs of zero activations through a zero 1 x N tile, read from the
// unified buffer's start, made zero too, in the accumulators). The extents come from the
// instructions' fields: what a program may write spans each instruction's rows, gaps included;
// what it surely wrote counts whole rows only, so a read is taken as needing zeros unless its
// bytes were surely written before it. Only the loaded weights differ from a fresh job: a zero
// tile instead of none where the accumulators were reset, so a program that MATMULs before its
// own first LOAD_W (NO_WEIGHTS in a job of its own; no compiler of the runtime emits one) reads
// zeros instead of failing.
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
    std::size_t max_program_bytes = TPU_PROGRAM_MAX_BYTES;
};

// The programs (each one job's, host addresses as link placeholders) joined in order into
// programs of at most max_program_bytes, a reset between two that share one. Each ends in HALT.
// Throws Error(Unsupported) for a program with SEND or RECV (collectives are not captured).
std::vector<Program> fuse_programs(std::span<const Program> programs, const FusionTarget &target);

} // namespace tpurt::detail
