// SPDX-License-Identifier: MIT
// train_bf16_test.cpp - bf16 operands of the training programs (train_compiler.hpp) on the
// engine: every dtype combination of the activation gradients, softmax, log-softmax and the
// cross-entropy and the pooling gradients equals the all-fp32 program on the exactly widened
// inputs with its results rounded to bf16 on the host (bit for bit: -0, subnormals, NaN,
// infinities and rounding ties among the values), and the ReLU, sigmoid, tanh and pooling
// gradients also equal their binary32 steps computed on the host. Small cards split the work into
// many tiles and programs.
#include "engine_runner.hpp"

#include <tpurt/codegen/train_compiler.hpp>
#include <tpurt/error.hpp>
#include <tpurt/golden/reference_pool_grad.hpp>
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/types/bf16.hpp>

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using runtime_test::engine_config;
using runtime_test::limits_of;
using runtime_test::run_bytes_on_engine;
using runtime_test::va;
using tpurt::DType;
using tpurt::GradFunction;

namespace {

const tpu_engine_config big = engine_config(128, 128, 8u << 20, 4u << 20);
const tpu_engine_config small = engine_config(16, 16, 16u << 10, 8u << 10);

using Bytes = std::vector<std::byte>;

// The values an operand of `type` holds: bf16 operands get v rounded (the card's inputs), and
// what the card computes with is their exact widening.
std::vector<float> representable(DType type, std::vector<float> v) {
    if (type == DType::Bf16)
        for (float &x : v)
            x = tpurt::Bf16::from_float(x).to_float();
    return v;
}

Bytes bytes_of(DType type, const std::vector<float> &v) {
    Bytes out(v.size() * tpurt::element_size(type));
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (type == DType::Fp32) {
            std::memcpy(&out[4 * i], &v[i], 4);
        } else {
            const std::uint16_t bits = tpurt::Bf16::from_float(v[i]).bits;
            std::memcpy(&out[2 * i], &bits, 2);
        }
    }
    return out;
}

std::vector<float> floats_of(const Bytes &b) {
    std::vector<float> out(b.size() / 4);
    std::memcpy(out.data(), b.data(), b.size());
    return out;
}

// The card's result in `type` for the fp32 result x: x, or x rounded to nearest even (NaN 0x7fc0).
std::uint32_t card_bits(DType type, float x) {
    if (type == DType::Fp32)
        return std::isnan(x) ? 0x7fc00000u : std::bit_cast<std::uint32_t>(x);
    return std::isnan(x) ? 0x7fc0u : tpurt::Bf16::from_float(x).bits;
}

// Output bytes of `type` equal the fp32 results `want` bit for bit (NaNs canonical).
void require_rounded(DType type, const Bytes &got, const std::vector<float> &want) {
    REQUIRE(got.size() == want.size() * tpurt::element_size(type));
    for (std::size_t i = 0; i < want.size(); ++i) {
        std::uint32_t bits = 0;
        std::memcpy(&bits, &got[i * tpurt::element_size(type)], tpurt::element_size(type));
        CAPTURE(i, want[i], tpurt::dtype_name(type));
        REQUIRE(bits == card_bits(type, want[i]));
    }
}

// Values of one operand: uniform in [lo, hi) with the special cases first (signed zeros,
// subnormals of fp32 and bf16, infinities, NaN, a bf16 rounding tie, huge values).
std::vector<float> with_specials(std::size_t n, unsigned seed, float lo, float hi) {
    std::vector<float> v = tpurt::uniform_fp32(n, seed, lo, hi);
    const float specials[] = {0.0f,
                              -0.0f,
                              0x1p-149f,
                              -0x1p-130f,
                              std::bit_cast<float>(0x00010000u), // the least bf16 subnormal
                              std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity(),
                              std::numeric_limits<float>::quiet_NaN(),
                              1.0f + 0x1p-8f, // halfway between two bf16 values
                              -3.0e38f,
                              1.0f + 0x1p-7f + 0x1p-8f};
    for (std::size_t i = 0; i < n && i < std::size(specials); ++i)
        v[(i * 7) % n] = specials[i];
    return v;
}

const DType both[] = {DType::Fp32, DType::Bf16};

std::vector<float> host_grad(GradFunction f, const std::vector<float> &x,
                             const std::vector<float> &d) {
    std::vector<float> out(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (f == GradFunction::Relu) {
            out[i] = x[i] > 0 ? d[i] : 0.0f;
        } else if (f == GradFunction::Sigmoid) {
            const float t = x[i] - x[i] * x[i];
            out[i] = t * d[i];
        } else {
            const float t = (x[i] * x[i]) * d[i];
            out[i] = d[i] - t;
        }
    }
    return out;
}

} // namespace

TEST_CASE("activation gradients of bf16 operands: the fp32 program's results, rounded",
          "[train][bf16]") {
    const GradFunction f =
        GENERATE(GradFunction::Relu, GradFunction::Sigmoid, GradFunction::Tanh, GradFunction::Gelu);
    const std::size_t n = GENERATE(1u, 11u, 3001u);
    const tpu_engine_config &cfg = GENERATE(std::cref(big), std::cref(small)).get();
    CAPTURE(tpurt::grad_function_name(f), n);
    const std::vector<float> x0 = with_specials(n, unsigned(n) + 11, -4.0f, 4.0f),
                             dy0 = with_specials(n, unsigned(n) + 12, -2.0f, 2.0f);
    const auto compile = [&](DType xt, DType dyt, DType dxt) {
        return tpurt::compile_activation_grad({.function = f,
                                               .elements = n,
                                               .x_type = xt,
                                               .dy_type = dyt,
                                               .dx_type = dxt,
                                               .x_addr = va(0),
                                               .dy_addr = va(1),
                                               .dx_addr = va(2)},
                                              limits_of(cfg));
    };
    for (DType xt : both)
        for (DType dyt : both)
            for (DType dxt : both) {
                CAPTURE(tpurt::dtype_name(xt), tpurt::dtype_name(dyt), tpurt::dtype_name(dxt));
                const std::vector<float> x = representable(xt, x0), dy = representable(dyt, dy0);
                const auto got = run_bytes_on_engine(
                    cfg, compile(xt, dyt, dxt),
                    {bytes_of(xt, x), bytes_of(dyt, dy), Bytes(n * tpurt::element_size(dxt))})[2];
                const std::vector<float> fp32 = floats_of(run_bytes_on_engine(
                    cfg, compile(DType::Fp32, DType::Fp32, DType::Fp32),
                    {bytes_of(DType::Fp32, x), bytes_of(DType::Fp32, dy), Bytes(n * 4)})[2]);
                require_rounded(dxt, got, fp32);
                if (f != GradFunction::Gelu) // GELU's sigmoid has no host model
                    require_rounded(dxt, got, host_grad(f, x, dy));
            }
}

TEST_CASE("softmax, log-softmax and cross-entropy of bf16 logits into bf16 or fp32",
          "[train][bf16]") {
    const auto kind = GENERATE(tpurt::SoftmaxKind::Softmax, tpurt::SoftmaxKind::LogSoftmax,
                               tpurt::SoftmaxKind::CrossEntropy);
    const auto [rows, cols] = GENERATE(std::pair<std::uint32_t, std::uint32_t>{1, 1},
                                       std::pair<std::uint32_t, std::uint32_t>{13, 10},
                                       std::pair<std::uint32_t, std::uint32_t>{70, 37});
    const tpu_engine_config &cfg = GENERATE(std::cref(big), std::cref(small)).get();
    CAPTURE(tpurt::softmax_kind_name(kind), rows, cols);
    const std::size_t count = std::size_t{rows} * cols;
    std::vector<float> x0 = tpurt::uniform_fp32(count, rows + cols, -8.0f, 8.0f);
    // One row of the special values that keep it finite: signed zeros, subnormals, a tie.
    const float specials[] = {-0.0f, 0.0f, 0x1p-140f, -0x1p-149f, 1.0f + 0x1p-8f};
    for (std::size_t c = 0; c < cols && c < std::size(specials); ++c)
        x0[c] = specials[c];
    std::vector<float> t(count, 0.0f);
    for (std::uint32_t r = 0; r < rows; ++r)
        t[std::size_t{r} * cols + (r * 3) % cols] = 1.0f;
    const float scale = 1.0f / float(rows);
    const auto run = [&](DType xt, DType outt, const std::vector<float> &x) {
        const auto programs = tpurt::compile_softmax({.kind = kind,
                                                      .rows = rows,
                                                      .cols = cols,
                                                      .grad_scale = scale,
                                                      .x_type = xt,
                                                      .out_type = outt,
                                                      .x_addr = va(0),
                                                      .target_addr = va(1),
                                                      .out_addr = va(2),
                                                      .loss_addr = va(3)},
                                                     limits_of(cfg));
        return run_bytes_on_engine(cfg, programs,
                                   {bytes_of(xt, x), bytes_of(DType::Fp32, t),
                                    Bytes(count * tpurt::element_size(outt)), Bytes(rows * 4)});
    };
    for (DType xt : both)
        for (DType outt : both) {
            CAPTURE(tpurt::dtype_name(xt), tpurt::dtype_name(outt));
            const std::vector<float> x = representable(xt, x0);
            const auto got = run(xt, outt, x);
            const auto fp32 = run(DType::Fp32, DType::Fp32, x);
            require_rounded(outt, got[2], floats_of(fp32[2]));
            if (kind == tpurt::SoftmaxKind::CrossEntropy)
                REQUIRE(got[3] == fp32[3]); // the losses: fp32 from the same widened logits
        }
}

TEST_CASE("pooling gradients of bf16 operands: the fp32 program's and the host's results",
          "[train][bf16]") {
    const auto op = GENERATE(tpurt::PoolOp::Max, tpurt::PoolOp::Avg);
    struct Shape {
        std::uint32_t batch, height, width, channels, window, stride;
    };
    // k x k windows at stride k, overlapping (3 x 3 at 2) and with gaps (2 x 2 at 3).
    const Shape s =
        GENERATE(Shape{1, 2, 2, 1, 2, 2}, Shape{2, 4, 6, 3, 2, 2}, Shape{3, 6, 9, 5, 3, 3},
                 Shape{2, 7, 8, 3, 3, 2}, Shape{1, 8, 7, 5, 2, 3});
    const tpu_engine_config &cfg = GENERATE(std::cref(big), std::cref(small)).get();
    CAPTURE(op == tpurt::PoolOp::Max, s.batch, s.height, s.width, s.channels, s.window, s.stride);
    const tpurt::PoolGradProblem shape{.op = op,
                                       .batch = s.batch,
                                       .height = s.height,
                                       .width = s.width,
                                       .channels = s.channels,
                                       .window_h = s.window,
                                       .window_w = s.window,
                                       .stride_h = s.stride,
                                       .stride_w = s.stride};
    const std::uint32_t k = s.window, oh = shape.out_height(), ow = shape.out_width(),
                        c = s.channels;
    const std::size_t in = std::size_t{s.batch} * s.height * s.width * c,
                      out = std::size_t{s.batch} * oh * ow * c;
    // Small integers (ties within windows are common), signed zeros, a NaN and an infinity.
    std::vector<float> x0(in);
    for (std::size_t i = 0; i < in; ++i)
        x0[i] = float(int((i * 2654435761u) >> 7) % 5 - 2);
    x0[0] = -0.0f;
    if (in > 5) {
        x0[3] = std::numeric_limits<float>::quiet_NaN();
        x0[5] = std::numeric_limits<float>::infinity();
    }
    const std::vector<float> dy0 = with_specials(out, unsigned(out) + 5, -3.0f, 3.0f);
    // The forward MAX pool on the host, NaN propagating.
    const auto forward = [&](const std::vector<float> &x) {
        std::vector<float> y(out);
        for (std::size_t img = 0; img < s.batch; ++img)
            for (std::size_t oy = 0; oy < oh; ++oy)
                for (std::size_t ox = 0; ox < ow; ++ox)
                    for (std::size_t ch = 0; ch < c; ++ch) {
                        const auto at = [&](std::size_t i, std::size_t j) {
                            return ((img * s.height + oy * s.stride + i) * s.width + ox * s.stride +
                                    j) *
                                       c +
                                   ch;
                        };
                        float m = x[at(0, 0)];
                        for (std::size_t i = 0; i < k; ++i)
                            for (std::size_t j = 0; j < k; ++j) {
                                const float v = x[at(i, j)];
                                m = std::isnan(m) || std::isnan(v) ? NAN : v > m ? v : m;
                            }
                        y[((img * oh + oy) * ow + ox) * c + ch] = m;
                    }
        return y;
    };
    const auto run = [&](DType xt, DType dyt, DType dxt, const std::vector<float> &x,
                         const std::vector<float> &y, const std::vector<float> &dy) {
        tpurt::PoolGradProblem p = shape;
        p.x_type = xt;
        p.dy_type = dyt;
        p.dx_type = dxt;
        const bool max = op == tpurt::PoolOp::Max;
        p.x_addr = max ? va(0) : 0;
        p.y_addr = max ? va(1) : 0;
        p.dy_addr = max ? va(2) : va(0);
        p.dx_addr = max ? va(3) : va(1);
        std::vector<Bytes> arrays;
        if (max)
            arrays = {bytes_of(xt, x), bytes_of(xt, y)};
        arrays.push_back(bytes_of(dyt, dy));
        arrays.push_back(Bytes(in * tpurt::element_size(dxt)));
        return run_bytes_on_engine(cfg, tpurt::compile_pool_grad(p, limits_of(cfg)),
                                   std::move(arrays))
            .back();
    };
    for (DType xt : both)
        for (DType dyt : both)
            for (DType dxt : both) {
                if (op == tpurt::PoolOp::Avg && xt == DType::Bf16)
                    continue; // AVG reads no x
                CAPTURE(tpurt::dtype_name(xt), tpurt::dtype_name(dyt), tpurt::dtype_name(dxt));
                const std::vector<float> x = representable(xt, x0), dy = representable(dyt, dy0);
                const std::vector<float> y = forward(x);
                const Bytes got = run(xt, dyt, dxt, x, y, dy);
                const auto fp32 = floats_of(run(DType::Fp32, DType::Fp32, DType::Fp32, x, y, dy));
                require_rounded(dxt, got, fp32);
                require_rounded(dxt, got, tpurt::reference_pool_grad(shape, x, y, dy));
            }
}

// The bf16 max pooling gradient rounds dy, not hit x dy (pool_grad_compiler.cpp): the same bits
// but where a finite fp32 dy rounds to a bf16 infinity, whose 0 x inf in the window's other
// elements is NaN where the fp32 program's rounded product is a signed zero.
TEST_CASE("bf16 max pooling gradient: a dy rounding to infinity gives NaN beside the maximum",
          "[train][bf16]") {
    const tpurt::PoolGradProblem shape{.batch = 1, .height = 2, .width = 4, .channels = 1};
    // Two windows: 2 at (0, 0) of the first (x[0], x[1], x[4], x[5]), 5 at (1, 1) of the second.
    const std::vector<float> x = {2, 0, 1, 0, 0, 1, 0, 5}, y = {2, 5};
    const float big_dy = 3.3999e38f; // finite, above bf16's largest 3.3895e38: rounds to inf
    const auto dx_bits = [&](const std::vector<float> &dy, DType xt, DType dxt) {
        tpurt::PoolGradProblem p = shape;
        p.x_type = xt;
        p.dx_type = dxt;
        p.x_addr = va(0);
        p.y_addr = va(1);
        p.dy_addr = va(2);
        p.dx_addr = va(3);
        const Bytes got = run_bytes_on_engine(
            big, tpurt::compile_pool_grad(p, limits_of(big)),
            {bytes_of(xt, x), bytes_of(xt, y), bytes_of(DType::Fp32, dy), Bytes(8 * 2)})[3];
        std::vector<std::uint16_t> bits(8);
        std::memcpy(bits.data(), got.data(), 16);
        return bits;
    };
    constexpr std::uint16_t inf = 0x7f80, nan = 0x7fc0, zero = 0, minus_zero = 0x8000;
    const std::uint16_t minus_three = tpurt::Bf16::from_float(-3.0f).bits;
    REQUIRE(dx_bits({big_dy, -3.0f}, DType::Bf16, DType::Bf16) ==
            std::vector<std::uint16_t>{inf, nan, minus_zero, minus_zero, nan, nan, minus_zero,
                                       minus_three});
    // The fp32 program with bf16 dx: the products rounded, zeros where no maximum is.
    REQUIRE(dx_bits({big_dy, -3.0f}, DType::Fp32, DType::Bf16) ==
            std::vector<std::uint16_t>{inf, zero, minus_zero, minus_zero, zero, zero, minus_zero,
                                       minus_three});
}

TEST_CASE("training compilers name the op and the dtype they refuse", "[train][bf16]") {
    const auto refused = [](const auto &compile, const std::string &expected) {
        try {
            compile();
            FAIL("not refused");
        } catch (const tpurt::Error &e) {
            CAPTURE(e.what());
            REQUIRE(e.code() == tpurt::ErrorCode::InvalidArgument);
            REQUIRE(std::string(e.what()).find(expected) != std::string::npos);
        }
    };
    refused(
        [] {
            tpurt::compile_activation_grad({.elements = 4, .dy_type = DType::Int8}, limits_of(big));
        },
        "relu_grad: dy is int8; the op takes fp32 or bf16");
    refused(
        [] {
            tpurt::compile_softmax({.rows = 1, .cols = 4, .out_type = DType::Int32},
                                   limits_of(big));
        },
        "softmax: out is int32");
    refused(
        [] {
            tpurt::compile_pool_grad(
                {.height = 2, .width = 2, .channels = 1, .x_type = DType::Int32}, limits_of(big));
        },
        "max pool gradient: x is int32");
}
