// SPDX-License-Identifier: MIT
// shape_executables.cpp - the batched matmul kernel: one matmul compiled per matrix of the
// batch (matrix i's A, B and C i x a_batch, b_batch, c_batch bytes from their bases), the
// programs of consecutive matrices joined into jobs; cached per device like every kernel's
// (see shape_executables.hpp).
#include "tpurt/codegen/shape_executables.hpp"

#include "codegen/program_splitter.hpp"
#include "exec/op_kernel.hpp"
#include "tpurt/error.hpp"

#include <string>

namespace tpurt {

namespace detail {

namespace {

std::uint64_t extent(std::uint32_t rows, std::uint64_t &stride, std::uint64_t row_bytes) {
    return (rows - 1) * spelled_out(stride, row_bytes) + row_bytes;
}

std::vector<Program> batched_programs(const BatchedMatmulProblem &problem,
                                      const ArrayLimits &limits, std::size_t max_program_bytes);

struct BatchedMatmulKernel {
    using Problem = BatchedMatmulProblem;
    static constexpr const char *name = "batched_matmul";

    static void bind(Problem &p, OpArguments &args) {
        MatmulProblem &m = p.matrix;
        const std::uint64_t e = element_size(m.type), ce = element_size(accumulator_type(m.type));
        const std::uint64_t last = p.batch - 1;
        args.bind(m.a_addr, "A", last * p.a_batch + extent(m.m, m.a_stride, m.k * e));
        args.bind(m.b_addr, "B", last * p.b_batch + extent(m.k, m.b_stride, m.n * e));
        args.bind(m.c_addr, "C", last * p.c_batch + extent(m.m, m.c_stride, m.n * ce));
    }
    static std::vector<Program> compile(const Problem &p, const ArrayLimits &limits) {
        return batched_programs(p, limits, TPU_PROGRAM_MAX_BYTES);
    }
    // "batched matmul bf16 8x64x64x64", with " shared-b" for one B.
    static std::string profile_name(const Problem &p) {
        const MatmulProblem &m = p.matrix;
        return std::string("batched matmul ") + dtype_name(m.type) + " " + std::to_string(p.batch) +
               "x" + std::to_string(m.m) + "x" + std::to_string(m.k) + "x" + std::to_string(m.n) +
               (p.b_batch ? "" : " shared-b");
    }
};

std::vector<Program> batched_programs(const BatchedMatmulProblem &problem,
                                      const ArrayLimits &limits, std::size_t max_program_bytes) {
    const MatmulProblem &m = problem.matrix;
    if (problem.batch == 0 || m.m == 0 || m.k == 0 || m.n == 0 || m.epilogue)
        throw Error(ErrorCode::InvalidArgument, BatchedMatmulKernel::profile_name(problem) +
                                                    ": dimensions must be non-zero, no epilogue");
    ProgramSplitter jobs(max_program_bytes);
    for (std::uint64_t i = 0; i < problem.batch; ++i) {
        MatmulProblem one = m;
        one.a_addr = m.a_addr + i * problem.a_batch;
        one.b_addr = m.b_addr + i * problem.b_batch;
        one.c_addr = m.c_addr + i * problem.c_batch;
        for (Program &p : compile_matmul(one, limits, max_program_bytes).programs) {
            p.insns.pop_back(); // its HALT: the job goes on with the next matrix's program
            jobs.add(p);
        }
    }
    return jobs.finish();
}

} // namespace

} // namespace detail

TPURT_KERNEL(detail::BatchedMatmulKernel);

Executable compile_batched_matmul_executable(const BatchedMatmulProblem &problem,
                                             const ArrayLimits &limits,
                                             std::size_t max_program_bytes) {
    BatchedMatmulProblem p = problem;
    detail::OpArguments args;
    detail::BatchedMatmulKernel::bind(p, args);
    std::vector<Program> programs = detail::batched_programs(p, limits, max_program_bytes);
    return Executable::link(detail::BatchedMatmulKernel::profile_name(p), args.take(),
                            std::move(programs));
}

std::shared_ptr<const Executable> batched_matmul_executable(Device &device,
                                                            const BatchedMatmulProblem &problem) {
    return cached_executable(device, problem);
}

} // namespace tpurt
