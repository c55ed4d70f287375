// SPDX-License-Identifier: MIT
// engine_runner.hpp - runs the runtime's compiled matmul and dense-layer programs on the engine
// library the way the driver and device would: operands in a device address space of simulated
// host memory, one engine job per program.
#pragma once

#include <tpurt/codegen/matmul_compiler.hpp>
#include <tpurt/ops/conv2d.hpp>
#include <tpurt/ops/dense.hpp>

#include <tpu_engine.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace runtime_test {

// A card configuration: the array and memories of an engine, as limits for the compiler.
tpu_engine_config engine_config(std::uint32_t rows, std::uint32_t cols, std::uint32_t ub_bytes,
                                std::uint32_t acc_bytes);
tpurt::ArrayLimits limits_of(const tpu_engine_config &cfg);

// Where run_fp32_on_engine() maps array i.
constexpr std::uint64_t va(int i) {
    return std::uint64_t(i + 1) << 32;
}

// Runs programs (one job each, each required to succeed) on a fresh card `cfg` with float
// arrays at va(0), va(1), ... in its address space; returns the arrays afterwards.
std::vector<std::vector<float>> run_fp32_on_engine(const tpu_engine_config &cfg,
                                                   const std::vector<tpurt::Program> &programs,
                                                   std::vector<std::vector<float>> arrays);

// The same for arrays of raw bytes (operands of mixed dtypes).
std::vector<std::vector<std::byte>> run_bytes_on_engine(const tpu_engine_config &cfg,
                                                        const std::vector<tpurt::Program> &programs,
                                                        std::vector<std::vector<std::byte>> arrays);

// Extra bytes at the end of every row of A, B and C (0: densely packed).
struct RowPadding {
    std::uint64_t a = 0, b = 0, c = 0;
};

struct EngineMatmul {
    tpurt::MatmulPlan plan;
    std::vector<std::byte> c; // M x N results, densely packed (int32 or fp32)
    std::uint64_t macs = 0;   // summed over the jobs
};

// Compiles C = A x B for the card `cfg` (A, B dense row-major arrays of `type`), runs every
// program on a fresh engine and returns C. A job ending with an error fails the test.
EngineMatmul run_matmul_on_engine(const tpu_engine_config &cfg, tpurt::DType type, std::uint32_t m,
                                  std::uint32_t k, std::uint32_t n, const void *a, const void *b,
                                  const RowPadding &padding = {},
                                  std::size_t max_program_bytes = TPU_PROGRAM_MAX_BYTES);

struct EngineConv2d {
    tpurt::Conv2dPlan plan;
    std::vector<std::byte> output; // NHWC: int32 or fp32, or the epilogue's type
    std::uint64_t macs = 0;
};

// Compiles the convolution (input NHWC and weights HWIO dense arrays of `type`) for the card
// `cfg`, with an epilogue if given (bias fp32[F] or nullptr for none; the epilogue's own
// bias_addr is ignored), runs every program on one engine and returns the output.
EngineConv2d run_conv2d_on_engine(const tpu_engine_config &cfg, tpurt::DType type,
                                  const tpurt::Conv2dShape &shape, const void *input,
                                  const void *weights,
                                  const tpurt::MatmulEpilogue *epilogue = nullptr,
                                  const float *bias = nullptr);

// Compiles the dense layer (A, W dense arrays of in_type, bias fp32[N] or nullptr for none)
// for the card `cfg`, runs it and returns the M x N out_type results in `c`.
EngineMatmul run_dense_on_engine(const tpu_engine_config &cfg, const tpurt::DenseLayer &layer,
                                 const void *a, const void *w, const float *bias);

} // namespace runtime_test
