// SPDX-License-Identifier: MIT
// shape_executables.hpp - batched matmuls as executables (see executable.hpp): one matmul
// compiled per matrix of the batch, the programs of consecutive matrices joined into jobs of up
// to 1 MiB. A pure function of the shapes and the card's limits, and its device-cached form.
// The axis reductions and permutations of axis_compiler.hpp are registered ops: their
// executables come from op_executables.hpp like every registered kernel's.
#pragma once

#include "tpurt/codegen/axis_compiler.hpp"
#include "tpurt/codegen/matmul_compiler.hpp"
#include "tpurt/executable.hpp"

#include <cstdint>
#include <memory>

namespace tpurt {

class Device;

// `batch` matmuls of `matrix` (its shapes and row strides; addresses ignored): matrix i of A, B
// and C at i x a_batch, b_batch, c_batch bytes from their bases (b_batch 0: one B for all).
struct BatchedMatmulProblem {
    MatmulProblem matrix;
    std::uint32_t batch = 1;
    std::uint64_t a_batch = 0, b_batch = 0, c_batch = 0;
};

// Arguments: A, B, C.
Executable compile_batched_matmul_executable(const BatchedMatmulProblem &problem,
                                             const ArrayLimits &limits,
                                             std::size_t max_program_bytes = TPU_PROGRAM_MAX_BYTES);

std::shared_ptr<const Executable> batched_matmul_executable(Device &device,
                                                            const BatchedMatmulProblem &problem);

} // namespace tpurt
