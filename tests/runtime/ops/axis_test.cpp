// SPDX-License-Identifier: MIT
// axis_test.cpp - the programs of axis reductions, permutations (axis_compiler.hpp) and batched
// matmuls (shape_executables.hpp) run on the engine: sums, maxima and means over every axis
// against ascending fp32 loops, every permutation of a rank-4 tensor element by element, and
// batched products exactly against loops, on a card whose small unified buffer splits the work
// into many blocks and programs.
#include "engine_runner.hpp"

#include <tpurt/codegen/axis_compiler.hpp>
#include <tpurt/codegen/shape_executables.hpp>
#include <tpurt/error.hpp>
#include <tpurt/testing/test_patterns.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <vector>

using runtime_test::engine_config;
using runtime_test::limits_of;
using runtime_test::run_fp32_on_engine;
using runtime_test::va;

namespace {

const tpu_engine_config big = engine_config(128, 128, 8u << 20, 4u << 20);
const tpu_engine_config small = engine_config(16, 16, 16u << 10, 8u << 10);

} // namespace

TEST_CASE("axis reductions: sum, max and mean over each axis, tiled") {
    const std::uint32_t d[3] = {3, 70, 45};
    const auto v = tpurt::small_ints(std::size_t{d[0]} * d[1] * d[2], 1, 50, 8.0f);
    for (const tpu_engine_config *cfg : {&big, &small}) {
        for (std::uint32_t axis = 0; axis < 3; ++axis) {
            const std::uint32_t outer = axis == 0 ? 1 : axis == 1 ? d[0] : d[0] * d[1];
            const std::uint32_t inner = axis == 0 ? d[1] * d[2] : axis == 1 ? d[2] : 1;
            const std::uint32_t length = d[axis];
            for (int kind = 0; kind < 3; ++kind) {
                CAPTURE(axis, kind, cfg == &small);
                const tpurt::AxisReduceProblem p{.type = tpurt::DType::Fp32,
                                                 .op = kind == 1 ? tpurt::ReduceOp::Max
                                                                 : tpurt::ReduceOp::Sum,
                                                 .mean = kind == 2,
                                                 .outer = outer,
                                                 .length = length,
                                                 .inner = inner,
                                                 .a_addr = va(0),
                                                 .dst_addr = va(1)};
                const auto programs = tpurt::compile_reduce_axis(p, limits_of(*cfg), 4096);
                const auto got = run_fp32_on_engine(
                    *cfg, programs, {v, std::vector<float>(std::size_t{outer} * inner)})[1];
                const float inv = 1.0f / static_cast<float>(length);
                for (std::uint32_t o = 0; o < outer; ++o)
                    for (std::uint32_t i = 0; i < inner; ++i) {
                        float acc = v[std::size_t{o} * length * inner + i];
                        for (std::uint32_t j = 1; j < length; ++j) {
                            const float e = v[(std::size_t{o} * length + j) * inner + i];
                            acc = kind == 1 ? std::max(acc, e) : acc + e;
                        }
                        if (kind == 2)
                            acc = (acc + 0.0f) * inv;
                        CAPTURE(o, i);
                        REQUIRE(got[std::size_t{o} * inner + i] == acc);
                    }
            }
        }
    }
    REQUIRE_THROWS_AS(tpurt::compile_reduce_axis(
                          {.type = tpurt::DType::Int8, .mean = true, .length = 4}, limits_of(big)),
                      tpurt::Error);
}

TEST_CASE("permute: every order of a rank-4 tensor, axes of one element, tiled") {
    for (const std::vector<std::uint32_t> &shape :
         {std::vector<std::uint32_t>{2, 3, 4, 5}, std::vector<std::uint32_t>{3, 1, 90, 70}}) {
        const std::size_t n = std::size_t{shape[0]} * shape[1] * shape[2] * shape[3];
        std::vector<float> v(n);
        std::iota(v.begin(), v.end(), 0.0f);
        std::vector<std::uint32_t> perm{0, 1, 2, 3};
        do {
            for (const tpu_engine_config *cfg : {&big, &small}) {
                CAPTURE(shape[2], perm[0], perm[1], perm[2], perm[3], cfg == &small);
                const tpurt::PermuteProblem p{.type = tpurt::DType::Fp32,
                                              .shape = shape,
                                              .perm = perm,
                                              .a_addr = va(0),
                                              .dst_addr = va(1)};
                const auto got =
                    run_fp32_on_engine(*cfg, tpurt::compile_permute(p, limits_of(*cfg), 8192),
                                       {v, std::vector<float>(n)})[1];
                std::uint32_t out[4];
                for (int k = 0; k < 4; ++k)
                    out[k] = shape[perm[k]];
                std::size_t i = 0;
                std::uint32_t idx[4], src[4];
                for (idx[0] = 0; idx[0] < out[0]; ++idx[0])
                    for (idx[1] = 0; idx[1] < out[1]; ++idx[1])
                        for (idx[2] = 0; idx[2] < out[2]; ++idx[2])
                            for (idx[3] = 0; idx[3] < out[3]; ++idx[3]) {
                                for (int k = 0; k < 4; ++k)
                                    src[perm[k]] = idx[k];
                                const std::size_t at =
                                    ((std::size_t{src[0]} * shape[1] + src[1]) * shape[2] +
                                     src[2]) *
                                        shape[3] +
                                    src[3];
                                REQUIRE(got[i++] == v[at]);
                            }
            }
        } while (std::next_permutation(perm.begin(), perm.end()));
    }
    REQUIRE_THROWS_AS(tpurt::compile_permute({.shape = {2, 3}, .perm = {0, 0}}, limits_of(big)),
                      tpurt::Error);
}

TEST_CASE("batched matmul executables: per-matrix and shared b, jobs joined") {
    const std::uint32_t batch = 5, m = 7, k = 20, n = 18;
    const auto a = tpurt::small_ints(std::size_t{batch} * m * k, 2, 50, 8.0f);
    const auto b = tpurt::small_ints(std::size_t{batch} * k * n, 3, 50, 8.0f);
    for (bool shared : {false, true}) {
        CAPTURE(shared);
        tpurt::MatmulProblem matrix;
        matrix.type = tpurt::DType::Fp32;
        matrix.m = m;
        matrix.k = k;
        matrix.n = n;
        const tpurt::BatchedMatmulProblem p{.matrix = matrix,
                                            .batch = batch,
                                            .a_batch = std::uint64_t{m} * k * 4,
                                            .b_batch = shared ? 0 : std::uint64_t{k} * n * 4,
                                            .c_batch = std::uint64_t{m} * n * 4};
        const tpurt::Executable exe =
            tpurt::compile_batched_matmul_executable(p, limits_of(small), 4096);
        REQUIRE(exe.program_count() < batch); // several matrices per job
        std::vector<tpurt::Program> programs;
        const std::uint64_t bases[] = {va(0), va(1), va(2)};
        for (std::size_t i = 0; i < exe.program_count(); ++i)
            programs.push_back(exe.patched(i, bases));
        const auto got = run_fp32_on_engine(
            small, programs, {a, b, std::vector<float>(std::size_t{batch} * m * n)})[2];
        for (std::uint32_t i = 0; i < batch; ++i)
            for (std::uint32_t r = 0; r < m; ++r)
                for (std::uint32_t c = 0; c < n; ++c) {
                    float s = 0;
                    for (std::uint32_t j = 0; j < k; ++j)
                        s += a[(std::size_t{i} * m + r) * k + j] *
                             b[((shared ? 0 : std::size_t{i}) * k + j) * n + c];
                    REQUIRE(got[(std::size_t{i} * m + r) * n + c] == s);
                }
    }
}
