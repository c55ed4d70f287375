// SPDX-License-Identifier: MIT
// shape_executables.hpp - the ops over a tensor's axes as executables (see executable.hpp and
// op_executables.hpp): reductions over an axis and permutations (axis_compiler.hpp), and
// batched matmuls (one matmul compiled per matrix of the batch, the programs of consecutive
// matrices joined into jobs of up to 1 MiB). Pure functions of the shapes and the card's limits,
// and their device-cached forms.
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

// Arguments: a, dst.
Executable compile_reduce_axis_executable(const AxisReduceProblem &problem,
                                          const ArrayLimits &limits);
// Arguments: a, dst.
Executable compile_permute_executable(const PermuteProblem &problem, const ArrayLimits &limits);
// Arguments: A, B, C.
Executable compile_batched_matmul_executable(const BatchedMatmulProblem &problem,
                                             const ArrayLimits &limits,
                                             std::size_t max_program_bytes = TPU_PROGRAM_MAX_BYTES);

std::shared_ptr<const Executable> reduce_axis_executable(Device &device,
                                                         const AxisReduceProblem &problem);
std::shared_ptr<const Executable> permute_executable(Device &device, const PermuteProblem &problem);
std::shared_ptr<const Executable> batched_matmul_executable(Device &device,
                                                            const BatchedMatmulProblem &problem);

} // namespace tpurt
