// SPDX-License-Identifier: MIT
// shape_executables.cpp - compiling axis reductions, permutations and batched matmuls into
// executables and caching them per device (see shape_executables.hpp).
#include "tpurt/codegen/shape_executables.hpp"

#include "codegen/program_splitter.hpp"
#include "device/device_state.hpp"
#include "tpurt/codegen/op_executables.hpp"
#include "tpurt/device.hpp"
#include "tpurt/error.hpp"

#include <string>

namespace tpurt {

using detail::limits_key;

namespace {

std::string reduce_axis_name(const AxisReduceProblem &p) {
    return std::string(p.mean                  ? "mean "
                       : p.op == ReduceOp::Sum ? "sum "
                                               : "max ") +
           dtype_name(p.type) + " " + std::to_string(p.outer) + "x[" + std::to_string(p.length) +
           "]x" + std::to_string(p.inner);
}

std::string permute_name(const PermuteProblem &p) {
    std::string shape, perm;
    for (std::size_t i = 0; i < p.shape.size(); ++i) {
        shape += (i ? "x" : "") + std::to_string(p.shape[i]);
        perm += (i ? "," : "") + std::to_string(p.perm[i]);
    }
    return std::string("permute ") + dtype_name(p.type) + " " + shape + " to " + perm;
}

std::string batched_name(const BatchedMatmulProblem &p) {
    const MatmulProblem &m = p.matrix;
    return std::string("batched matmul ") + dtype_name(m.type) + " " + std::to_string(p.batch) +
           "x" + std::to_string(m.m) + "x" + std::to_string(m.k) + "x" + std::to_string(m.n) +
           (p.b_batch ? "" : " shared-b");
}

std::string batched_key(const BatchedMatmulProblem &p, const ArrayLimits &limits) {
    return batched_name(p) + " batch strides " + std::to_string(p.a_batch) + "," +
           std::to_string(p.b_batch) + "," + std::to_string(p.c_batch) + " of " +
           executable_key(p.matrix, limits);
}

std::uint64_t extent(std::uint32_t rows, std::uint64_t stride, std::uint64_t row_bytes) {
    return (rows - 1) * (stride ? stride : row_bytes) + row_bytes;
}

} // namespace

Executable compile_reduce_axis_executable(const AxisReduceProblem &problem,
                                          const ArrayLimits &limits) {
    AxisReduceProblem p = problem;
    p.a_addr = Executable::placeholder(0);
    p.dst_addr = Executable::placeholder(1);
    const std::uint64_t outer = p.outer, inner = p.inner;
    return Executable::link(reduce_axis_name(p),
                            {{"a", outer * p.length * inner * element_size(p.type)},
                             {"dst", outer * inner * element_size(axis_reduce_result_type(p))}},
                            compile_reduce_axis(p, limits));
}

Executable compile_permute_executable(const PermuteProblem &problem, const ArrayLimits &limits) {
    PermuteProblem p = problem;
    p.a_addr = Executable::placeholder(0);
    p.dst_addr = Executable::placeholder(1);
    std::uint64_t bytes = element_size(p.type);
    for (std::uint32_t extent : p.shape)
        bytes *= extent;
    return Executable::link(permute_name(p), {{"a", bytes}, {"dst", bytes}},
                            compile_permute(p, limits));
}

Executable compile_batched_matmul_executable(const BatchedMatmulProblem &problem,
                                             const ArrayLimits &limits,
                                             std::size_t max_program_bytes) {
    const MatmulProblem &m = problem.matrix;
    if (problem.batch == 0 || m.m == 0 || m.k == 0 || m.n == 0 || m.epilogue)
        throw Error(ErrorCode::InvalidArgument,
                    batched_name(problem) + ": dimensions must be non-zero, no epilogue");
    const std::uint64_t e = element_size(m.type), ce = element_size(accumulator_type(m.type));
    const std::uint64_t last = problem.batch - 1;
    std::vector<ExecutableArg> args{
        {"A", last * problem.a_batch + extent(m.m, m.a_stride, m.k * e)},
        {"B", last * problem.b_batch + extent(m.k, m.b_stride, m.n * e)},
        {"C", last * problem.c_batch + extent(m.m, m.c_stride, m.n * ce)}};
    ProgramSplitter jobs(max_program_bytes);
    for (std::uint64_t i = 0; i < problem.batch; ++i) {
        MatmulProblem one = m;
        one.a_addr = Executable::placeholder(0) + i * problem.a_batch;
        one.b_addr = Executable::placeholder(1) + i * problem.b_batch;
        one.c_addr = Executable::placeholder(2) + i * problem.c_batch;
        for (Program &p : compile_matmul(one, limits, max_program_bytes).programs) {
            p.insns.pop_back(); // its HALT: the job goes on with the next matrix's program
            jobs.add(p);
        }
    }
    return Executable::link(batched_name(problem), std::move(args), jobs.finish());
}

std::shared_ptr<const Executable> reduce_axis_executable(Device &device,
                                                         const AxisReduceProblem &problem) {
    const ArrayLimits &limits = device.info().limits;
    return detail::state_of(device).executables.get(
        reduce_axis_name(problem) + limits_key(limits),
        [&] { return compile_reduce_axis_executable(problem, limits); });
}

std::shared_ptr<const Executable> permute_executable(Device &device,
                                                     const PermuteProblem &problem) {
    const ArrayLimits &limits = device.info().limits;
    return detail::state_of(device).executables.get(
        permute_name(problem) + limits_key(limits),
        [&] { return compile_permute_executable(problem, limits); });
}

std::shared_ptr<const Executable> batched_matmul_executable(Device &device,
                                                            const BatchedMatmulProblem &problem) {
    const ArrayLimits &limits = device.info().limits;
    return detail::state_of(device).executables.get(batched_key(problem, limits), [&] {
        return compile_batched_matmul_executable(problem, limits);
    });
}

} // namespace tpurt
