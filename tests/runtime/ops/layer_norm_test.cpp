// SPDX-License-Identifier: MIT
// layer_norm_test.cpp - layer normalisation's programs (layer_norm_compiler.hpp) run on the
// engine: the forward pass and the gradients bit for bit against the binary32 steps the header
// defines, evaluated on the host one operation at a time (golden/reference_layer_norm.hpp); the
// gradients also against central finite differences of the card's own forward pass. Shapes include
// a single element, single rows and columns, and tiles and programs split over a small card.
#include "engine_runner.hpp"

#include <tpurt/codegen/layer_norm_compiler.hpp>
#include <tpurt/error.hpp>
#include <tpurt/golden/reference_layer_norm.hpp>
#include <tpurt/testing/test_patterns.hpp>

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <string>
#include <vector>

using runtime_test::engine_config;
using runtime_test::limits_of;
using runtime_test::run_fp32_on_engine;
using runtime_test::va;

namespace {

const tpu_engine_config big = engine_config(128, 128, 8u << 20, 4u << 20);
const tpu_engine_config small = engine_config(16, 16, 16u << 10, 8u << 10);

std::vector<float> forward(const tpu_engine_config &cfg, const std::vector<float> &x,
                           const std::vector<float> &gamma, const std::vector<float> &beta,
                           std::uint32_t rows, std::uint32_t cols, float eps,
                           std::size_t max_program_bytes = TPU_PROGRAM_MAX_BYTES) {
    const tpurt::LayerNormProblem p{.backward = false,
                                    .rows = rows,
                                    .cols = cols,
                                    .eps = eps,
                                    .x_addr = va(0),
                                    .gamma_addr = va(1),
                                    .beta_addr = va(2),
                                    .y_addr = va(3)};
    const auto programs = tpurt::compile_layer_norm(p, limits_of(cfg), max_program_bytes);
    return run_fp32_on_engine(cfg, programs, {x, gamma, beta, std::vector<float>(x.size())})[3];
}

// dx, dgamma, dbeta.
std::vector<std::vector<float>> backward(const tpu_engine_config &cfg, const std::vector<float> &x,
                                         const std::vector<float> &gamma,
                                         const std::vector<float> &dy, std::uint32_t rows,
                                         std::uint32_t cols, float eps,
                                         std::size_t max_program_bytes = TPU_PROGRAM_MAX_BYTES) {
    const tpurt::LayerNormProblem p{.backward = true,
                                    .rows = rows,
                                    .cols = cols,
                                    .eps = eps,
                                    .x_addr = va(0),
                                    .gamma_addr = va(1),
                                    .dy_addr = va(2),
                                    .dx_addr = va(3),
                                    .dgamma_addr = va(4),
                                    .dbeta_addr = va(5)};
    const auto programs = tpurt::compile_layer_norm(p, limits_of(cfg), max_program_bytes);
    auto out = run_fp32_on_engine(cfg, programs,
                                  {x, gamma, dy, std::vector<float>(x.size()),
                                   std::vector<float>(cols), std::vector<float>(cols)});
    return {out[3], out[4], out[5]};
}

void require_bits(const std::vector<float> &got, const std::vector<float> &want) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        CAPTURE(i, got[i], want[i]);
        REQUIRE(std::bit_cast<std::uint32_t>(got[i]) == std::bit_cast<std::uint32_t>(want[i]));
    }
}

} // namespace

TEST_CASE("layer norm and its gradient: bit for bit the binary32 steps") {
    struct Case {
        const tpu_engine_config *cfg;
        std::uint32_t rows, cols;
        std::size_t max_program_bytes;
    };
    const float eps = 1e-5f;
    for (const Case &k :
         {Case{&big, 1, 1, TPU_PROGRAM_MAX_BYTES}, Case{&big, 3, 7, 4096},
          Case{&big, 1, 300, TPU_PROGRAM_MAX_BYTES}, Case{&big, 200, 1, TPU_PROGRAM_MAX_BYTES},
          Case{&small, 61, 37, TPU_PROGRAM_MAX_BYTES}, Case{&small, 61, 37, 2048},
          Case{&small, 12, 150, TPU_PROGRAM_MAX_BYTES}}) {
        CAPTURE(k.rows, k.cols, k.max_program_bytes);
        const std::size_t n = std::size_t{k.rows} * k.cols;
        const auto x = tpurt::uniform_fp32(n, k.rows + k.cols, -3.0f, 5.0f);
        const auto gamma = tpurt::uniform_fp32(k.cols, 2, 0.5f, 1.5f),
                   beta = tpurt::uniform_fp32(k.cols, 3, -1.0f, 1.0f);
        const auto dy = tpurt::uniform_fp32(n, 4, -1.0f, 1.0f);
        const tpurt::LayerNormReference want =
            tpurt::reference_layer_norm(x, gamma, beta, dy, k.rows, k.cols, eps);
        require_bits(forward(*k.cfg, x, gamma, beta, k.rows, k.cols, eps, k.max_program_bytes),
                     want.y);
        const auto got = backward(*k.cfg, x, gamma, dy, k.rows, k.cols, eps, k.max_program_bytes);
        require_bits(got[0], want.dx);
        require_bits(got[1], want.dgamma);
        require_bits(got[2], want.dbeta);
    }
}

TEST_CASE("layer norm gradients against central differences of the card's forward pass") {
    const std::uint32_t rows = 6, cols = 9;
    const float eps = 1e-5f;
    const std::size_t n = std::size_t{rows} * cols;
    const auto x = tpurt::uniform_fp32(n, 11, -2.0f, 2.0f),
               w = tpurt::uniform_fp32(n, 12, -1.0f, 1.0f);
    const auto gamma = tpurt::uniform_fp32(cols, 13, 0.5f, 1.5f),
               beta = tpurt::uniform_fp32(cols, 14, -1.0f, 1.0f);
    // L = sum(y w), so dy = w.
    const auto loss = [&](const std::vector<float> &xs, const std::vector<float> &gs,
                          const std::vector<float> &bs) {
        const auto y = forward(big, xs, gs, bs, rows, cols, eps);
        double l = 0;
        for (std::size_t i = 0; i < n; ++i)
            l += double(y[i]) * w[i];
        return l;
    };
    const auto grads = backward(big, x, gamma, w, rows, cols, eps);
    // h = 1e-2: the fp32 outputs' rounding over 2h and the truncation stay below 2e-3 here.
    const float h = 1e-2f;
    const auto check = [&](int which, std::size_t i, float analytic) {
        std::vector<float> up[3] = {x, gamma, beta}, down[3] = {x, gamma, beta};
        up[which][i] += h;
        down[which][i] -= h;
        const double diff = (loss(up[0], up[1], up[2]) - loss(down[0], down[1], down[2])) /
                            (double(up[which][i]) - double(down[which][i]));
        CAPTURE(which, i, diff, analytic);
        REQUIRE(std::fabs(diff - analytic) <= 2e-3 + 2e-3 * std::fabs(diff));
    };
    for (std::size_t i : {0u, 5u, 17u, 53u})
        check(0, i, grads[0][i]);
    for (std::size_t c : {0u, 4u, 8u}) {
        check(1, c, grads[1][c]);
        check(2, c, grads[2][c]);
    }
}

TEST_CASE("layer norm refuses what the card cannot hold") {
    const tpurt::ArrayLimits limits = limits_of(small);
    REQUIRE_THROWS_AS(tpurt::compile_layer_norm({.rows = 0, .cols = 4}, limits), tpurt::Error);
    try {
        tpurt::compile_layer_norm({.backward = true, .rows = 2, .cols = 5000}, limits);
        FAIL("a row beyond the unified buffer was accepted");
    } catch (const tpurt::Error &e) {
        REQUIRE(e.code() == tpurt::ErrorCode::Unsupported);
        REQUIRE(std::string(e.what()).find("layer_norm_grad over rows of 5000") !=
                std::string::npos);
    }
}
