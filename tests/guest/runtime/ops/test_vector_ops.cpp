// SPDX-License-Identifier: MIT
// test_vector_ops.cpp - guest test: elementwise ops (add, sub, mul, max, min; b of a's shape or
// one row broadcast), row reductions (sum, max), unary relu and relu6, casts and int8 quantise /
// dequantise with scales, max and average pooling on tensors on the real card equal reference
// loops written here (fp32 and bf16 in binary32 with bf16 rounding to nearest even, int8
// saturating, int32 wrapping), on 3-D tensors and on views; mismatched tensors are refused; unary
// erf within its documented ulp bounds on a spec 2.3 card, refused by an older one
// (vm_spec22_card). The transcendental functions are checked bit for bit on the engine
// (tests/runtime/ops/unary_test.cpp).
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/tpurt.hpp>

#include "runtime_helpers.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace {

using tpurt::DType;
using tpurt::Tensor;
using tpurt::VectorOp;

using guest_test::device;
using guest_test::require_refused;

double op_on(VectorOp op, double a, double b) {
    switch (op) {
    case VectorOp::Add:
        return a + b;
    case VectorOp::Sub:
        return a - b;
    case VectorOp::Mul:
        return a * b;
    case VectorOp::Max:
        return b > a ? b : a;
    case VectorOp::Min:
        return b < a ? b : a;
    default: // the spec 1.4 ops: tests/guest/runtime/training/test_train_ops.cpp
        break;
    }
    return 0;
}

// fp32: one binary32 operation (the double result of two floats' +, - or * rounds to the same
// float as the binary32 operation: 53 >= 2 * 24 + 2 bits).
std::vector<float> ref_fp32(VectorOp op, const std::vector<float> &a, const std::vector<float> &b,
                            std::size_t cols) {
    std::vector<float> out(a.size());
    for (std::size_t i = 0; i < a.size(); ++i)
        out[i] = static_cast<float>(op_on(op, a[i], b[b.size() == a.size() ? i : i % cols]));
    return out;
}

std::vector<tpurt::Bf16> ref_bf16(VectorOp op, const std::vector<tpurt::Bf16> &a,
                                  const std::vector<tpurt::Bf16> &b, std::size_t cols) {
    std::vector<tpurt::Bf16> out(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        const float r = static_cast<float>(
            op_on(op, a[i].to_float(), b[b.size() == a.size() ? i : i % cols].to_float()));
        out[i] = tpurt::Bf16::from_float(r);
    }
    return out;
}

std::vector<std::int8_t> ref_int8(VectorOp op, const std::vector<std::int8_t> &a,
                                  const std::vector<std::int8_t> &b) {
    std::vector<std::int8_t> out(a.size());
    for (std::size_t i = 0; i < a.size(); ++i)
        out[i] = static_cast<std::int8_t>(
            std::clamp(op_on(op, a[i], b[i]), -128.0, 127.0)); // exact in double, saturated
    return out;
}

const VectorOp all_ops[] = {VectorOp::Add, VectorOp::Sub, VectorOp::Mul, VectorOp::Max,
                            VectorOp::Min};

} // namespace

TEST_CASE("elementwise ops on tensors equal the reference", "[vector]") {
    tpurt::Device &dev = device();
    const std::size_t d0 = 3, d1 = 50, cols = 129, count = d0 * d1 * cols;
    for (VectorOp op : all_ops) {
        INFO("op " << int(op));
        const auto a = tpurt::random_fp32(count, 1), b = tpurt::random_fp32(count, 2);
        const auto row = tpurt::random_fp32(cols, 3);
        const Tensor ta = Tensor::from_host<float>(dev, a, {d0, d1, cols});
        const Tensor tb = Tensor::from_host<float>(dev, b, {d0, d1, cols});
        const Tensor trow = Tensor::from_host<float>(dev, row, {cols});
        Tensor out = Tensor::empty(dev, DType::Fp32, {d0, d1, cols});
        tpurt::elementwise(dev, op, ta, tb, out);
        CHECK(out.to_vector<float>() == ref_fp32(op, a, b, cols));
        tpurt::elementwise(dev, op, ta, trow, out);
        CHECK(out.to_vector<float>() == ref_fp32(op, a, row, cols));

        const auto ha = tpurt::random_bf16(count, 4), hb = tpurt::random_bf16(cols, 5);
        Tensor hout = Tensor::empty(dev, DType::Bf16, {d0 * d1, cols});
        tpurt::elementwise(dev, op, Tensor::from_host<tpurt::Bf16>(dev, ha, {d0 * d1, cols}),
                           Tensor::from_host<tpurt::Bf16>(dev, hb, {1, cols}), hout);
        CHECK(hout.to_vector<tpurt::Bf16>() == ref_bf16(op, ha, hb, cols));

        const auto ia = tpurt::random_int8(count, 6), ib = tpurt::random_int8(count, 7);
        Tensor iout = Tensor::empty(dev, DType::Int8, {count});
        tpurt::elementwise(dev, op, Tensor::from_host<std::int8_t>(dev, ia, {count}),
                           Tensor::from_host<std::int8_t>(dev, ib, {count}), iout);
        CHECK(iout.to_vector<std::int8_t>() == ref_int8(op, ia, ib));
    }
}

TEST_CASE("elementwise ops on views write only the view", "[vector]") {
    tpurt::Device &dev = device();
    const auto a = tpurt::random_fp32(40 * 70, 8);
    const Tensor big = Tensor::from_host<float>(dev, a, {40, 70});
    const Tensor view = big.slice(0, 3, 33).slice(1, 5, 65); // 30 x 60, rows 70 apart
    Tensor out_big = Tensor::empty(dev, DType::Fp32, {30, 64});
    Tensor out = out_big.slice(1, 2, 62);
    tpurt::add(dev, view, view, out);
    const std::vector<float> got = out_big.to_vector<float>();
    for (std::size_t r = 0; r < 30; ++r)
        for (std::size_t c = 0; c < 64; ++c) {
            const bool inside = c >= 2 && c < 62;
            const float want = inside ? a[(r + 3) * 70 + c - 2 + 5] * 2 : 0.0f;
            REQUIRE(got[r * 64 + c] == want);
        }
}

TEST_CASE("row sums and maxima on tensors equal the reference", "[vector][reduce]") {
    tpurt::Device &dev = device();
    const std::size_t rows = 90, cols = 300;
    const auto a = tpurt::random_fp32(rows * cols, 9);
    const Tensor ta = Tensor::from_host<float>(dev, a, {3, 30, cols});
    Tensor sums = Tensor::empty(dev, DType::Fp32, {3, 30});
    Tensor maxima = Tensor::empty(dev, DType::Fp32, {3, 30});
    tpurt::reduce_rows(dev, tpurt::ReduceOp::Sum, ta, sums);
    tpurt::reduce_rows(dev, tpurt::ReduceOp::Max, ta, maxima);
    std::vector<float> want_sum(rows), want_max(rows);
    for (std::size_t r = 0; r < rows; ++r) {
        float s = a[r * cols], m = a[r * cols];
        for (std::size_t c = 1; c < cols; ++c) {
            s += a[r * cols + c];
            m = a[r * cols + c] > m ? a[r * cols + c] : m;
        }
        want_sum[r] = s;
        want_max[r] = m;
    }
    CHECK(sums.to_vector<float>() == want_sum);
    CHECK(maxima.to_vector<float>() == want_max);

    const auto ia = tpurt::random_int8(rows * cols, 10);
    Tensor isum = Tensor::empty(dev, DType::Int32, {rows});
    tpurt::reduce_rows(dev, tpurt::ReduceOp::Sum,
                       Tensor::from_host<std::int8_t>(dev, ia, {rows, cols}), isum);
    std::vector<std::int32_t> want(rows, 0);
    for (std::size_t i = 0; i < ia.size(); ++i)
        want[i / cols] += ia[i];
    CHECK(isum.to_vector<std::int32_t>() == want);
}

TEST_CASE("unary relu, relu6 and conversions on tensors equal the reference", "[vector][unary]") {
    tpurt::Device &dev = device();
    const std::size_t count = 70000; // two chunks of the card's MATMUL
    std::vector<float> x = tpurt::random_fp32(count, 12);
    for (std::size_t i = 0; i < count; i += 7)
        x[i] *= 0.03f; // values around 6 and below
    x[0] = -0.0f;
    const Tensor a = Tensor::from_host<float>(dev, x, {7, count / 7});
    Tensor out = Tensor::empty(dev, DType::Fp32, {7, count / 7});
    Tensor half = Tensor::empty(dev, DType::Bf16, {7, count / 7});
    tpurt::unary(dev, tpurt::Activation::Relu, a, out);
    std::vector<float> want(count);
    for (std::size_t i = 0; i < count; ++i)
        want[i] = x[i] > 0 ? x[i] : 0.0f;
    CHECK(out.to_vector<float>() == want);
    CHECK(!std::signbit(out.to_vector<float>()[0]));
    tpurt::unary(dev, tpurt::Activation::Relu6, a, out);
    for (std::size_t i = 0; i < count; ++i)
        want[i] = x[i] > 6 ? 6.0f : (x[i] > 0 ? x[i] : 0.0f);
    CHECK(out.to_vector<float>() == want);
    tpurt::unary(dev, tpurt::Activation::None, a, half);
    std::vector<tpurt::Bf16> rounded(count);
    for (std::size_t i = 0; i < count; ++i)
        rounded[i] = tpurt::Bf16::from_float(x[i] == 0 ? 0.0f : x[i]);
    CHECK(half.to_vector<tpurt::Bf16>() == rounded);
}

TEST_CASE("unary erf runs on a spec 2.3 card and is refused by an older one", "[vector][erf]") {
    tpurt::Device &dev = device();
    std::vector<float> x = tpurt::random_fp32(4096, 23);
    for (float &v : x)
        v *= 0.02f; // within (-5, 5): both branches and the saturation at 4
    const Tensor a = Tensor::from_host<float>(dev, x, {64, 64});
    Tensor out = Tensor::empty(dev, DType::Fp32, {64, 64});
    if (!(dev.info().caps & TPU_CAP_ACT_ERF)) {
        INFO("spec " << (dev.info().spec_version >> 16) << "."
                     << (dev.info().spec_version & 0xffff));
        try {
            tpurt::unary(dev, tpurt::Activation::Erf, a, out);
            FAIL("unary erf ran on a card without ACT_ERF");
        } catch (const tpurt::Error &e) {
            CHECK(e.code() == tpurt::ErrorCode::Unsupported);
            CHECK_THAT(e.what(), Catch::Contains("this card has no ACTIVATE erf (spec 2.3)"));
        }
        return;
    }
    tpurt::unary(dev, tpurt::Activation::Erf, a, out);
    const std::vector<float> got = out.to_vector<float>();
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double want = std::erf(double(x[i]));
        int e;
        std::frexp(want, &e);
        INFO("x = " << x[i] << ", erf " << got[i] << ", want " << want);
        REQUIRE(std::fabs(got[i] - want) <= 2.5 * std::ldexp(1.0, std::max(e - 24, -149)));
    }
}

TEST_CASE("quantise to int8 and dequantise with scales", "[vector][unary]") {
    tpurt::Device &dev = device();
    const std::size_t count = 4096;
    const std::vector<float> x = tpurt::random_fp32(count, 13); // |x| < 256
    const float step = 1.5f;
    const Tensor a = Tensor::from_host<float>(dev, x, {64, 64});
    Tensor q = Tensor::empty(dev, DType::Int8, {64, 64});
    Tensor back = Tensor::empty(dev, DType::Fp32, {64, 64});
    tpurt::cast(dev, a, q, 1.0f / step);
    tpurt::cast(dev, q, back, step);
    std::vector<std::int8_t> want_q(count);
    std::vector<float> want_back(count);
    for (std::size_t i = 0; i < count; ++i) {
        const float scaled = (x[i] == 0 ? 0.0f : x[i]) * (1.0f / step);
        want_q[i] = static_cast<std::int8_t>(std::clamp(std::nearbyint(scaled), -128.0f, 127.0f));
        want_back[i] = static_cast<float>(want_q[i]) * step;
    }
    CHECK(q.to_vector<std::int8_t>() == want_q);
    CHECK(back.to_vector<float>() == want_back);
}

TEST_CASE("max and average pooling on tensors equal the reference", "[vector][pool]") {
    tpurt::Device &dev = device();
    const std::size_t n = 2, h = 28, w = 28, c = 8;
    const auto x = tpurt::random_fp32(n * h * w * c, 14);
    const Tensor in = Tensor::from_host<float>(dev, x, {n, h, w, c});
    Tensor maxed = Tensor::empty(dev, DType::Fp32, {n, 14, 14, c});
    Tensor avged = Tensor::empty(dev, DType::Fp32, {n, 14, 14, c});
    tpurt::pool2d(dev, tpurt::PoolOp::Max, in, maxed, 2, 2, 2, 2);
    tpurt::pool2d(dev, tpurt::PoolOp::Avg, in, avged, 2, 2, 2, 2);
    std::vector<float> want_max, want_avg;
    for (std::size_t b = 0; b < n; ++b)
        for (std::size_t oy = 0; oy < 14; ++oy)
            for (std::size_t ox = 0; ox < 14; ++ox)
                for (std::size_t ch = 0; ch < c; ++ch) {
                    const auto at = [&](std::size_t i, std::size_t j) {
                        return x[((b * h + 2 * oy + i) * w + 2 * ox + j) * c + ch];
                    };
                    float m = at(0, 0), s = at(0, 0);
                    for (std::size_t k = 1; k < 4; ++k) {
                        const float v = at(k / 2, k % 2);
                        m = v > m ? v : m;
                        s += v;
                    }
                    want_max.push_back(m);
                    want_avg.push_back(s / 4.0f);
                }
    CHECK(maxed.to_vector<float>() == want_max);
    CHECK(avged.to_vector<float>() == want_avg);
    Tensor wrong = Tensor::empty(dev, DType::Fp32, {n, 13, 14, c});
    require_refused([&] { tpurt::pool2d(dev, tpurt::PoolOp::Max, in, wrong, 2, 2, 2, 2); },
                    "must have the shape");
}

TEST_CASE("a row of C combines with a [1, C] tensor as with every row of a matrix", "[vector]") {
    tpurt::Device &dev = device();
    const std::vector<float> a_values{1, 2, 3}, b_values{10, 20, 30};
    const Tensor a = Tensor::from_host<float>(dev, a_values, {1, 3});
    const Tensor b = Tensor::from_host<float>(dev, b_values, {3});
    Tensor out = Tensor::empty(dev, DType::Fp32, {1, 3});
    tpurt::mul(dev, a, b, out);
    CHECK(out.to_vector<float>() == std::vector<float>{10, 40, 90});
    Tensor flat = out.reshape({3});
    tpurt::add(dev, b, a.reshape({3}), flat);
    CHECK(out.to_vector<float>() == std::vector<float>{11, 22, 33});
}

TEST_CASE("vector ops refuse mismatched tensors", "[vector][errors]") {
    tpurt::Device &dev = device();
    const Tensor a = Tensor::empty(dev, DType::Fp32, {8, 16});
    const Tensor other = Tensor::empty(dev, DType::Fp32, {8, 15});
    const Tensor half = Tensor::empty(dev, DType::Bf16, {8, 16});
    Tensor out = Tensor::empty(dev, DType::Fp32, {8, 16});
    Tensor sums = Tensor::empty(dev, DType::Fp32, {8});
    Tensor wrong_sums = Tensor::empty(dev, DType::Bf16, {8});
    require_refused([&] { tpurt::add(dev, a, other, out); }, "nor its last dimension");
    require_refused([&] { tpurt::add(dev, a, half, out); }, "one dtype");
    require_refused([&] { tpurt::add(dev, a, a.transpose(0, 1), out); }, "adjacent elements");
    require_refused([&] { tpurt::add(dev, a, a, sums); }, "does not have a's shape");
    require_refused([&] { tpurt::reduce_rows(dev, tpurt::ReduceOp::Sum, a, wrong_sums); },
                    "must be fp32");
    require_refused([&] { tpurt::reduce_rows(dev, tpurt::ReduceOp::Sum, a, out); },
                    "one element per row");
    require_refused([&] { tpurt::unary(dev, tpurt::Activation::Exp, a.transpose(0, 1), out); },
                    "densely packed");
    const Tensor ints = Tensor::empty(dev, DType::Int32, {8, 16});
    require_refused([&] { tpurt::unary(dev, tpurt::Activation::Exp, ints, out); },
                    "int8, bf16 or fp32");
}
