// SPDX-License-Identifier: MIT
// engine_runner.cpp - stages matmul operands in an engine address space, runs the compiled
// programs and collects C (see engine_runner.hpp).
#include "engine_runner.hpp"

#include <tpu_test/card.hpp>

#include <catch2/catch.hpp>

#include <tpurt/error.hpp>

#include <cstring>

namespace runtime_test {

namespace {

constexpr std::uint64_t a_va = 0x0100000000ull;
constexpr std::uint64_t b_va = 0x0200000000ull;
constexpr std::uint64_t c_va = 0x0300000000ull;
constexpr std::uint64_t bias_va = 0x0400000000ull;

// Writes `rows` rows of `row_bytes` from a dense array to va, `stride` bytes apart.
void write_rows(tpu::test::AddressSpace &space, std::uint64_t va, const void *data,
                std::uint64_t rows, std::uint64_t row_bytes, std::uint64_t stride) {
    const auto *bytes = static_cast<const std::byte *>(data);
    for (std::uint64_t r = 0; r < rows; ++r)
        space.write(va + r * stride, bytes + r * row_bytes, row_bytes);
}

// Runs every program as one job in `space`, each required to succeed; returns their MACs.
std::uint64_t run_programs(tpu::test::Card &card, tpu::test::AddressSpace &space,
                           const std::vector<tpurt::Program> &programs) {
    std::uint64_t macs = 0;
    for (std::size_t i = 0; i < programs.size(); ++i) {
        const tpu_job_result result = card.run(space, programs[i].insns);
        INFO("program " << i << " of " << programs.size() << ": "
                        << tpurt::job_status_name(result.status) << " at instruction "
                        << result.error_pc << ", fault address 0x" << std::hex
                        << result.fault_addr);
        REQUIRE(result.status == TPU_ERR_NONE);
        macs += result.macs;
    }
    return macs;
}

} // namespace

std::vector<std::vector<float>> run_fp32_on_engine(const tpu_engine_config &cfg,
                                                   const std::vector<tpurt::Program> &programs,
                                                   std::vector<std::vector<float>> arrays) {
    std::vector<std::vector<std::byte>> bytes;
    for (const std::vector<float> &a : arrays) {
        const auto *p = reinterpret_cast<const std::byte *>(a.data());
        bytes.emplace_back(p, p + a.size() * 4);
    }
    bytes = run_bytes_on_engine(cfg, programs, std::move(bytes));
    for (std::size_t i = 0; i < arrays.size(); ++i)
        std::memcpy(arrays[i].data(), bytes[i].data(), bytes[i].size());
    return arrays;
}

std::vector<std::vector<std::byte>>
run_bytes_on_engine(const tpu_engine_config &cfg, const std::vector<tpurt::Program> &programs,
                    std::vector<std::vector<std::byte>> arrays) {
    tpu::test::HostMemory memory;
    tpu::test::Card card(memory, cfg);
    tpu::test::AddressSpace space = card.address_space(1);
    for (std::size_t i = 0; i < arrays.size(); ++i) {
        space.map(va(int(i)), arrays[i].size(), tpu::test::kReadWrite);
        space.write(va(int(i)), arrays[i].data(), arrays[i].size());
    }
    run_programs(card, space, programs);
    for (std::size_t i = 0; i < arrays.size(); ++i)
        space.read(va(int(i)), arrays[i].data(), arrays[i].size());
    return arrays;
}

tpu_engine_config engine_config(std::uint32_t rows, std::uint32_t cols, std::uint32_t ub_bytes,
                                std::uint32_t acc_bytes) {
    tpu_engine_config cfg = tpu::test::Card::default_config();
    cfg.mxu_rows = rows;
    cfg.mxu_cols = cols;
    cfg.ub_bytes = ub_bytes;
    cfg.acc_bytes = acc_bytes;
    return cfg;
}

tpurt::ArrayLimits limits_of(const tpu_engine_config &cfg) {
    return {cfg.mxu_rows, cfg.mxu_cols, cfg.ub_bytes, cfg.acc_bytes};
}

namespace {

// Runs the compiled `problem` (strides set, operands at the fixed addresses above) on a fresh
// engine and collects C of c_elem-byte elements.
EngineMatmul run_problem(const tpu_engine_config &cfg, const tpurt::MatmulProblem &problem,
                         const void *a, const void *b, const float *bias, std::uint64_t c_elem,
                         std::size_t max_program_bytes) {
    const std::uint64_t m = problem.m, k = problem.k, n = problem.n;
    const std::uint64_t elem = tpurt::element_size(problem.type);
    EngineMatmul run;
    run.plan = tpurt::compile_matmul(problem, limits_of(cfg), max_program_bytes);

    tpu::test::HostMemory memory;
    tpu::test::Card card(memory, cfg);
    tpu::test::AddressSpace space = card.address_space(1);
    space.map(a_va, m * problem.a_stride, tpu::test::kRead);
    space.map(b_va, k * problem.b_stride, tpu::test::kRead);
    space.map(c_va, m * problem.c_stride, tpu::test::kWrite);
    write_rows(space, a_va, a, m, k * elem, problem.a_stride);
    write_rows(space, b_va, b, k, n * elem, problem.b_stride);
    if (bias) {
        space.map(bias_va, n * 4, tpu::test::kRead);
        space.write(bias_va, bias, n * 4);
    }

    run.macs = run_programs(card, space, run.plan.programs);

    const std::uint64_t c_row = n * c_elem;
    run.c.resize(m * c_row);
    for (std::uint64_t r = 0; r < m; ++r)
        space.read(c_va + r * problem.c_stride, run.c.data() + r * c_row, c_row);
    return run;
}

} // namespace

EngineMatmul run_matmul_on_engine(const tpu_engine_config &cfg, tpurt::DType type, std::uint32_t m,
                                  std::uint32_t k, std::uint32_t n, const void *a, const void *b,
                                  const RowPadding &padding, std::size_t max_program_bytes) {
    const std::uint64_t elem = tpurt::element_size(type);
    const std::uint64_t acc_elem = tpurt::element_size(tpurt::accumulator_type(type));
    tpurt::MatmulProblem problem;
    problem.type = type;
    problem.m = m;
    problem.k = k;
    problem.n = n;
    problem.a_addr = a_va;
    problem.b_addr = b_va;
    problem.c_addr = c_va;
    problem.a_stride = k * elem + padding.a;
    problem.b_stride = n * elem + padding.b;
    problem.c_stride = n * acc_elem + padding.c;
    return run_problem(cfg, problem, a, b, nullptr, acc_elem, max_program_bytes);
}

EngineConv2d run_conv2d_on_engine(const tpu_engine_config &cfg, tpurt::DType type,
                                  const tpurt::Conv2dShape &shape, const void *input,
                                  const void *weights, const tpurt::MatmulEpilogue *epilogue,
                                  const float *bias) {
    const std::uint64_t elem = tpurt::element_size(type);
    const std::uint64_t in_bytes = shape.input_elements() * elem;
    const std::uint64_t w_bytes = shape.weight_elements() * elem;
    const tpurt::DType out_type = epilogue ? epilogue->out_type : tpurt::accumulator_type(type);
    const std::uint64_t out_bytes = shape.output_elements() * tpurt::element_size(out_type);
    tpurt::Conv2dProblem problem{
        .type = type, .shape = shape, .input_addr = a_va, .weight_addr = b_va, .output_addr = c_va};
    if (epilogue) {
        problem.epilogue = *epilogue;
        problem.epilogue->bias_addr = bias ? std::optional<std::uint64_t>(bias_va) : std::nullopt;
    }
    EngineConv2d run;
    run.plan = tpurt::compile_conv2d(problem, limits_of(cfg));

    tpu::test::HostMemory memory;
    tpu::test::Card card(memory, cfg);
    tpu::test::AddressSpace space = card.address_space(1);
    space.map(a_va, in_bytes, tpu::test::kRead);
    space.map(b_va, w_bytes, tpu::test::kRead);
    space.map(c_va, out_bytes, tpu::test::kWrite);
    space.write(a_va, input, in_bytes);
    space.write(b_va, weights, w_bytes);
    if (bias && epilogue) {
        space.map(bias_va, std::uint64_t{shape.filters} * 4, tpu::test::kRead);
        space.write(bias_va, bias, std::uint64_t{shape.filters} * 4);
    }
    run.macs = run_programs(card, space, run.plan.programs);
    run.output.resize(out_bytes);
    space.read(c_va, run.output.data(), out_bytes);
    return run;
}

EngineMatmul run_dense_on_engine(const tpu_engine_config &cfg, const tpurt::DenseLayer &layer,
                                 const void *a, const void *w, const float *bias) {
    tpurt::MatmulProblem problem = tpurt::dense_problem(
        layer, a_va, b_va, bias ? std::optional<std::uint64_t>(bias_va) : std::nullopt, c_va);
    const std::uint64_t elem = tpurt::element_size(layer.in_type);
    const std::uint64_t out_elem = tpurt::element_size(layer.out_type);
    problem.a_stride = layer.k * elem;
    problem.b_stride = layer.n * elem;
    problem.c_stride = layer.n * out_elem;
    return run_problem(cfg, problem, a, w, bias, out_elem, TPU_PROGRAM_MAX_BYTES);
}

} // namespace runtime_test
