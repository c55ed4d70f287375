// SPDX-License-Identifier: MIT
// axis_compiler.hpp - compiles ops over any axis of a densely packed tensor into card programs:
// reductions (sum, max, mean) over one axis, and permutations of the axes. Pure functions of
// shapes, addresses and the card's limits, like vector_compiler.hpp's.
//
// A reduction sees the tensor as [outer, length, inner] (the axis in the middle). Over the last
// axis (inner 1) a tile of whole rows goes through one REDUCE; otherwise per outer index a block
// of length x w columns is DMA'd in (rows inner elements apart), TRANSPOSEd to w rows of length
// and REDUCEd. So every result is REDUCE's: the sum in ascending order along the axis (int8 and
// int32 into int32 with wrap-around, bf16 and fp32 into fp32), MAX keeping the dtype; the mean
// is that fp32 sum times 1.0f / length (ACTIVATE's scale, through the 1 x 1 fp32 weight of
// train_compiler.hpp's programs: one rounding), for bf16 and fp32 tensors.
//
// A permutation first drops axes of one element and merges axes that stay adjacent and in order;
// then every output is a set of 2-D blocks: when the input's last axis stays last, rows copied
// by DMA (in through the input's strides, out densely), otherwise blocks of input rows along the
// axis that becomes the output's last, TRANSPOSEd in the unified buffer and DMA'd out with the
// output's stride. Exact copies of the elements, any dtype.
#pragma once

#include "tpurt/card/vpu_ops.hpp"
#include "tpurt/codegen/program_builder.hpp"
#include "tpurt/device_info.hpp"
#include "tpurt/types/dtype.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tpurt {

struct AxisReduceProblem {
    DType type = DType::Fp32;
    ReduceOp op = ReduceOp::Sum;
    bool mean = false; // with op Sum: the sum times 1.0f / length, fp32 (bf16, fp32 tensors)
    std::uint32_t outer = 1, length = 0, inner = 1;
    std::uint64_t a_addr = 0, dst_addr = 0; // dst: outer x inner results, densely packed
};

// The dtype of an axis reduction's results: reduce_result_type(), fp32 for a mean.
DType axis_reduce_result_type(const AxisReduceProblem &problem);

std::vector<Program> compile_reduce_axis(const AxisReduceProblem &problem,
                                         const ArrayLimits &limits,
                                         std::size_t max_program_bytes = TPU_PROGRAM_MAX_BYTES);

// out = a with its axes permuted: out's axis i is a's axis perm[i] (out's shape is
// shape[perm[i]]); both densely packed.
struct PermuteProblem {
    DType type = DType::Fp32;
    std::vector<std::uint32_t> shape; // a's shape, every extent non-zero
    std::vector<std::uint32_t> perm;  // a permutation of 0 .. rank - 1
    std::uint64_t a_addr = 0, dst_addr = 0;
};

std::vector<Program> compile_permute(const PermuteProblem &problem, const ArrayLimits &limits,
                                     std::size_t max_program_bytes = TPU_PROGRAM_MAX_BYTES);

} // namespace tpurt
