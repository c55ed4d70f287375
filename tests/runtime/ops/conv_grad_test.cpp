// SPDX-License-Identifier: MIT
// conv_grad_test.cpp - the convolution gradients' programs (conv_grad_compiler.hpp) run on the
// engine with strides, padding and dilation: bit for bit reference_conv2d() of the lowered
// operands (reference_conv2d_input_grad / _weight_grad: dy spread out, the kernel flipped,
// transposed and dilated, x and dy permuted, the dilated taps picked, by plain loops), in fp32,
// bf16 and int8 (into int32), the lowering's shapes against the formulas; and, every type on
// both cards, against central finite differences of a direct double-precision convolution (the loss
// sum(dy conv(x, w)) is linear, so the differences are the exact gradient up to double
// rounding). Odd sizes, C and F not multiples of 8, a small card that tiles everything.
#include "engine_runner.hpp"

#include <tpurt/codegen/conv_grad_compiler.hpp>
#include <tpurt/error.hpp>
#include <tpurt/golden/reference_conv_grad.hpp>
#include <tpurt/ops/conv2d.hpp>
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/types/bf16.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using runtime_test::engine_config;
using runtime_test::limits_of;
using runtime_test::run_bytes_on_engine;
using runtime_test::va;
using tpurt::Conv2dShape;
using tpurt::DType;

namespace {

using Bytes = std::vector<std::byte>;

const tpu_engine_config big = engine_config(128, 128, 8u << 20, 4u << 20);
const tpu_engine_config small = engine_config(32, 8, 8u << 10, 2u << 10);

struct Case {
    std::uint32_t n, h, w, c, kh, kw, f, sh, sw, ph, pw, dh, dw;
    std::uint32_t kh_d() const { return (kh - 1) * dh + 1; }
    std::uint32_t kw_d() const { return (kw - 1) * dw + 1; }
    std::uint32_t hs() const { return h + 2 * ph - kh_d() + 1; } // stride-1 output
    std::uint32_t ws() const { return w + 2 * pw - kw_d() + 1; }
    std::uint32_t oh() const { return (hs() - 1) / sh + 1; }
    std::uint32_t ow() const { return (ws() - 1) / sw + 1; }
    tpurt::ConvGradProblem problem(DType type) const {
        return {.type = type,
                .shape = {.batch = n,
                          .height = h,
                          .width = w,
                          .channels = c,
                          .kernel_h = kh,
                          .kernel_w = kw,
                          .filters = f,
                          .stride_h = sh,
                          .stride_w = sw,
                          .pad_h = ph,
                          .pad_w = pw},
                .dilation_h = dh,
                .dilation_w = dw};
    }
};

// Values of `type` as floats (bf16: rounded; int8: integers of -4 .. 4), and their bytes.
std::vector<float> values(DType type, std::size_t count, unsigned seed) {
    std::vector<float> v = tpurt::uniform_fp32(count, seed, -2.0f, 2.0f);
    if (type == DType::Int8)
        for (float &x : v)
            x = std::round(2 * x);
    if (type == DType::Bf16)
        for (float &x : v)
            x = tpurt::Bf16::from_float(x).to_float();
    return v;
}
Bytes bytes_of(DType type, const std::vector<float> &v) {
    Bytes out(v.size() * tpurt::element_size(type));
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (type == DType::Int8) {
            out[i] = static_cast<std::byte>(static_cast<std::int8_t>(v[i]));
        } else if (type == DType::Bf16) {
            const tpurt::Bf16 b = tpurt::Bf16::from_float(v[i]);
            std::memcpy(&out[2 * i], &b, 2);
        } else {
            std::memcpy(&out[4 * i], &v[i], 4);
        }
    }
    return out;
}
// The results (fp32, or int32 for int8 operands) as doubles.
std::vector<double> results_of(DType type, const Bytes &b) {
    std::vector<double> out(b.size() / 4);
    for (std::size_t i = 0; i < out.size(); ++i) {
        if (type == DType::Int8) {
            std::int32_t v;
            std::memcpy(&v, &b[4 * i], 4);
            out[i] = v;
        } else {
            float v;
            std::memcpy(&v, &b[4 * i], 4);
            out[i] = v;
        }
    }
    return out;
}

Bytes card_input_grad(const tpu_engine_config &cfg, DType type, const Case &k,
                      const std::vector<float> &dy, const std::vector<float> &w) {
    tpurt::ConvGradProblem p = k.problem(type);
    const tpurt::ConvGradLowering l = tpurt::lower_conv_grad(p);
    p.dy_addr = va(0);
    p.weight_addr = va(1);
    p.dx_addr = va(2);
    p.kernel_addr = va(3);
    p.dys_addr = va(4);
    const std::size_t e = tpurt::element_size(type);
    const auto out = run_bytes_on_engine(
        cfg, tpurt::compile_conv2d_input_grad(p, limits_of(cfg)),
        {bytes_of(type, dy), bytes_of(type, w), Bytes(std::size_t{k.n} * k.h * k.w * k.c * 4),
         Bytes(l.kernel_elements * e), Bytes(std::max<std::size_t>(l.dys_elements * e, 4))});
    return out[2];
}

Bytes card_weight_grad(const tpu_engine_config &cfg, DType type, const Case &k,
                       const std::vector<float> &x, const std::vector<float> &dy) {
    tpurt::ConvGradProblem p = k.problem(type);
    const tpurt::ConvGradLowering l = tpurt::lower_conv_grad(p);
    p.x_addr = va(0);
    p.dy_addr = va(1);
    p.dw_addr = va(2);
    p.xt_addr = va(3);
    p.g_addr = va(4);
    p.dys_addr = va(5);
    const std::size_t e = tpurt::element_size(type);
    const auto out = run_bytes_on_engine(cfg, tpurt::compile_conv2d_weight_grad(p, limits_of(cfg)),
                                         {bytes_of(type, x), bytes_of(type, dy),
                                          Bytes(std::size_t{k.kh} * k.kw * k.c * k.f * 4),
                                          Bytes(x.size() * e), Bytes(l.g_elements * 4),
                                          Bytes(std::max<std::size_t>(l.dys_elements * e, 4))});
    return out[2];
}

// sum(dy conv(x, w)) by the direct strided, padded, dilated convolution in double.
double loss(const Case &k, const std::vector<float> &x, const std::vector<float> &w,
            const std::vector<float> &dy) {
    double total = 0;
    for (std::uint32_t i = 0; i < k.n; ++i)
        for (std::uint32_t oy = 0; oy < k.oh(); ++oy)
            for (std::uint32_t ox = 0; ox < k.ow(); ++ox)
                for (std::uint32_t f = 0; f < k.f; ++f) {
                    double acc = 0;
                    for (std::uint32_t a = 0; a < k.kh; ++a)
                        for (std::uint32_t b = 0; b < k.kw; ++b) {
                            const std::int64_t iy = std::int64_t{oy} * k.sh - k.ph + a * k.dh,
                                               ix = std::int64_t{ox} * k.sw - k.pw + b * k.dw;
                            if (iy < 0 || ix < 0 || iy >= k.h || ix >= k.w)
                                continue;
                            const auto at = static_cast<std::size_t>((i * k.h + iy) * k.w + ix);
                            for (std::uint32_t c = 0; c < k.c; ++c)
                                acc += double(x[at * k.c + c]) *
                                       w[((std::size_t{a} * k.kw + b) * k.c + c) * k.f + f];
                        }
                    total += acc * dy[((std::size_t{i} * k.oh() + oy) * k.ow() + ox) * k.f + f];
                }
    return total;
}

// Central differences of f in each element of v (steps of 2^-6, divided by the step taken).
std::vector<double> finite_differences(std::vector<float> &v, const std::function<double()> &f) {
    std::vector<double> out(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
        const float keep = v[i];
        v[i] = keep + 0x1p-6f;
        const double up = f(), at_up = v[i];
        v[i] = keep - 0x1p-6f;
        const double down = f(), at_down = v[i];
        v[i] = keep;
        out[i] = (up - down) / (at_up - at_down);
    }
    return out;
}

} // namespace

TEST_CASE("convolution gradients with strides, padding and dilation", "[conv2d][gradcheck]") {
    const Case k = GENERATE(Case{2, 9, 8, 3, 3, 3, 5, 2, 2, 1, 1, 1, 1},   // stride 2, odd
                            Case{1, 10, 11, 5, 3, 2, 7, 3, 3, 0, 1, 1, 1}, // stride 3, remainders
                            Case{2, 8, 7, 3, 3, 3, 4, 1, 1, 2, 2, 2, 2},   // dilation 2
                            Case{1, 11, 9, 6, 2, 3, 9, 2, 3, 1, 0, 2, 1},  // mixed
                            Case{3, 5, 6, 3, 3, 3, 2, 1, 1, 1, 1, 1, 1},   // stride 1 as before
                            Case{1, 7, 7, 2, 1, 1, 3, 2, 2, 0, 0, 1, 1});  // 1 x 1, stride 2
    const tpu_engine_config &cfg = GENERATE(std::cref(big), std::cref(small)).get();
    const DType type = GENERATE(DType::Fp32, DType::Bf16, DType::Int8);
    CAPTURE(k.n, k.h, k.w, k.c, k.kh, k.kw, k.f, k.sh, k.sw, k.ph, k.pw, k.dh, k.dw,
            tpurt::dtype_name(type));
    const tpurt::ConvGradLowering l = tpurt::lower_conv_grad(k.problem(type));
    REQUIRE(l.out_h == k.oh());
    REQUIRE(l.out_w == k.ow());
    std::vector<float> x = values(type, std::size_t{k.n} * k.h * k.w * k.c, 3);
    std::vector<float> w = values(type, std::size_t{k.kh} * k.kw * k.c * k.f, 5);
    const std::vector<float> dy = values(type, std::size_t{k.n} * k.oh() * k.ow() * k.f, 7);
    // Int8 operands give int32 results, exact.
    const Bytes dx = card_input_grad(cfg, type, k, dy, w);
    const Bytes dw = card_weight_grad(cfg, type, k, x, dy);
    const tpurt::ConvGradProblem p = k.problem(type);
    const Bytes dyb = bytes_of(type, dy);
    REQUIRE(dx == tpurt::reference_conv2d_input_grad(p, dyb, bytes_of(type, w)));
    REQUIRE(dw == tpurt::reference_conv2d_weight_grad(p, bytes_of(type, x), dyb));
    // The reference above is built on the lowering under test, so every type on both cards is
    // also held against the gradient's definition. fp32 sums (bf16 operands too) of at most a
    // few hundred products of values below 2 in magnitude: 1e-4; int8 into int32 is exact.
    const auto near = [&](const std::vector<double> &got, const std::vector<double> &want) {
        REQUIRE(got.size() == want.size());
        for (std::size_t i = 0; i < got.size(); ++i) {
            CAPTURE(i, got[i], want[i]);
            if (type == DType::Int8)
                REQUIRE(got[i] == want[i]);
            else
                REQUIRE(std::fabs(got[i] - want[i]) <= 1e-4 * (1 + std::fabs(want[i])));
        }
    };
    near(results_of(type, dx), finite_differences(x, [&] { return loss(k, x, w, dy); }));
    near(results_of(type, dw), finite_differences(w, [&] { return loss(k, x, w, dy); }));
}

TEST_CASE("convolution gradients refuse what they cannot lower, saying why", "[conv2d][errors]") {
    const auto refused = [](Case k, const std::string &expected) {
        try {
            tpurt::lower_conv_grad(k.problem(DType::Fp32));
            FAIL("not refused");
        } catch (const tpurt::Error &e) {
            CAPTURE(e.what());
            REQUIRE(e.code() == tpurt::ErrorCode::InvalidArgument);
            REQUIRE(std::string(e.what()).find(expected) != std::string::npos);
        }
    };
    refused({1, 5, 5, 1, 3, 3, 1, 0, 1, 0, 0, 1, 1}, "strides or dilations of 0");
    refused({1, 5, 5, 1, 3, 3, 1, 1, 1, 0, 0, 3, 1}, "dilated kernel of 7 x 3 taps is larger");
    refused({1, 5, 5, 1, 2, 2, 1, 1, 1, 2, 0, 1, 1}, "padding of 2 x 0 must be below");
}

namespace {

// The MACs of a program's MATMULs: M x K x N, N the last LOAD_W's.
std::uint64_t macs_of(const std::vector<tpurt::Program> &programs) {
    std::uint64_t macs = 0, n = 0;
    for (const tpurt::Program &program : programs)
        for (const tpu_insn &insn : program.insns) {
            if (insn.hdr.opcode == TPU_OP_LOAD_W)
                n = insn.mxu.cols;
            else if (insn.hdr.opcode == TPU_OP_MATMUL)
                macs += std::uint64_t{insn.mxu.rows} * insn.mxu.cols * n;
        }
    return macs;
}

} // namespace

// Stride-1 weight gradients with enough channels for conv_weight_grad_direct.cpp's program: the
// net's MACs only, and the bits of the lowering as a convolution (its reference).
TEST_CASE("stride-1 weight gradients do only the net's MACs, bit for bit", "[conv2d]") {
    const Case k = GENERATE(Case{32, 6, 7, 8, 3, 3, 16, 1, 1, 1, 1, 1, 1},
                            Case{64, 8, 8, 16, 3, 3, 32, 1, 1, 1, 1, 1, 1},
                            Case{32, 5, 9, 12, 2, 3, 8, 1, 1, 0, 1, 1, 1});
    const DType type = GENERATE(DType::Fp32, DType::Bf16);
    CAPTURE(k.n, k.h, k.w, k.c, k.kh, k.kw, k.f, k.ph, k.pw, tpurt::dtype_name(type));
    tpurt::ConvGradProblem p = k.problem(type);
    REQUIRE(macs_of(tpurt::compile_conv2d_weight_grad(p, limits_of(big))) ==
            std::uint64_t{k.kh} * k.kw * k.c * k.f * k.n * k.oh() * k.ow());
    const std::vector<float> x = values(type, std::size_t{k.n} * k.h * k.w * k.c, 3);
    const std::vector<float> dy = values(type, std::size_t{k.n} * k.oh() * k.ow() * k.f, 7);
    REQUIRE(card_weight_grad(big, type, k, x, dy) ==
            tpurt::reference_conv2d_weight_grad(p, bytes_of(type, x), bytes_of(type, dy)));
}
