// SPDX-License-Identifier: MIT
// test_more_ops.cpp - guest test: layer normalisation, reductions over any axis, batched matmuls
// and permutations on the real card, through their blocking and stream forms. Layer norm
// against double-precision formulas and its gradients against central finite differences of
// the card's forward pass; sums and maxima exactly against plain loops (small integers), means
// against the card's arithmetic (the ascending fp32 sum times 1.0f / n); batched matmuls
// exactly against plain loops; permutations element by element; grouped, depthwise and
// dilated convolutions exactly against plain loops and the grouped gradients against central
// differences of the card's forward pass; refusals of wrong operands.
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/tpurt.hpp>

#include "runtime_helpers.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace {

using tpurt::DType;
using tpurt::ReduceOp;
using tpurt::Tensor;

using guest_test::device;
using guest_test::require_refused;
using tpurt::small_ints;

Tensor fp32(const std::vector<float> &v, std::vector<std::size_t> shape) {
    return Tensor::from_host(device(), std::span<const float>(v), std::move(shape));
}

struct LayerNormOut {
    std::vector<double> y, dx, dgamma, dbeta;
};

// The textbook formulas in double precision.
LayerNormOut layer_norm_reference(const std::vector<float> &x, const std::vector<float> &gamma,
                                  const std::vector<float> &beta, const std::vector<float> &dy,
                                  std::size_t rows, std::size_t cols, double eps) {
    LayerNormOut out{std::vector<double>(x.size()), std::vector<double>(x.size()),
                     std::vector<double>(cols), std::vector<double>(cols)};
    std::vector<double> xh(cols), g(cols);
    for (std::size_t r = 0; r < rows; ++r) {
        double mean = 0, var = 0;
        for (std::size_t c = 0; c < cols; ++c)
            mean += x[r * cols + c];
        mean /= double(cols);
        for (std::size_t c = 0; c < cols; ++c)
            var += (x[r * cols + c] - mean) * (x[r * cols + c] - mean);
        var /= double(cols);
        const double rstd = 1 / std::sqrt(var + eps);
        double sg = 0, sgx = 0;
        for (std::size_t c = 0; c < cols; ++c) {
            xh[c] = (x[r * cols + c] - mean) * rstd;
            out.y[r * cols + c] = xh[c] * gamma[c] + beta[c];
            out.dgamma[c] += dy[r * cols + c] * xh[c];
            out.dbeta[c] += dy[r * cols + c];
            g[c] = dy[r * cols + c] * gamma[c];
            sg += g[c];
            sgx += g[c] * xh[c];
        }
        for (std::size_t c = 0; c < cols; ++c)
            out.dx[r * cols + c] = rstd * (g[c] - sg / double(cols) - xh[c] * sgx / double(cols));
    }
    return out;
}

void require_close(const std::vector<float> &got, const std::vector<double> &want, double tol) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        CAPTURE(i, got[i], want[i]);
        REQUIRE(std::fabs(got[i] - want[i]) <= tol * (1 + std::fabs(want[i])));
    }
}

} // namespace

TEST_CASE("layer norm and its gradient on the card: formulas, finite differences, streams") {
    tpurt::Device &dev = device();
    const std::size_t rows = 4 * 6, cols = 33;
    const std::vector<std::size_t> shape{4, 6, cols};
    const float eps = 1e-5f;
    const auto x = tpurt::uniform_fp32(rows * cols, 1, -3.0f, 5.0f),
               dy = tpurt::uniform_fp32(rows * cols, 2, -1, 1);
    const auto gamma = tpurt::uniform_fp32(cols, 3, 0.5f, 1.5f),
               beta = tpurt::uniform_fp32(cols, 4, -1.0f, 1.0f);
    const Tensor xt = fp32(x, shape), gt = fp32(gamma, {cols}), bt = fp32(beta, {cols}),
                 dyt = fp32(dy, shape);
    Tensor y = Tensor::empty(dev, DType::Fp32, shape), dx = Tensor::empty(dev, DType::Fp32, shape);
    Tensor dgamma = Tensor::empty(dev, DType::Fp32, {cols});
    Tensor dbeta = Tensor::empty(dev, DType::Fp32, {1, cols});
    tpurt::layer_norm(dev, xt, gt, bt, y, eps);
    tpurt::layer_norm_grad(dev, xt, gt, dyt, dx, dgamma, dbeta, eps);
    const LayerNormOut want = layer_norm_reference(x, gamma, beta, dy, rows, cols, eps);
    // Single-precision steps over 33 elements: a few ulps of values of order 1.
    require_close(y.to_vector<float>(), want.y, 2e-6);
    require_close(dx.to_vector<float>(), want.dx, 1e-5);
    require_close(dgamma.to_vector<float>(), want.dgamma, 1e-5);
    require_close(dbeta.to_vector<float>(), want.dbeta, 1e-5);

    // The stream forms queue the same programs: the same bits.
    tpurt::Stream stream(dev);
    Tensor y2 = Tensor::empty(dev, DType::Fp32, shape),
           dx2 = Tensor::empty(dev, DType::Fp32, shape);
    Tensor dgamma2 = Tensor::empty(dev, DType::Fp32, {cols});
    Tensor dbeta2 = Tensor::empty(dev, DType::Fp32, {cols});
    tpurt::layer_norm(stream, xt, gt, bt, y2, eps);
    tpurt::layer_norm_grad(stream, xt, gt, dyt, dx2, dgamma2, dbeta2, eps);
    stream.synchronize();
    REQUIRE(y2.to_vector<float>() == y.to_vector<float>());
    REQUIRE(dx2.to_vector<float>() == dx.to_vector<float>());
    REQUIRE(dgamma2.to_vector<float>() == dgamma.to_vector<float>());
    REQUIRE(dbeta2.to_vector<float>() == dbeta.to_vector<float>());

    // Central differences of L = sum(y dy) on the card, h = 1e-2 (the fp32 outputs' rounding
    // over 2h and the truncation stay below 2e-3 here).
    const auto loss = [&](const std::vector<float> &xs, const std::vector<float> &gs,
                          const std::vector<float> &bs) {
        Tensor out = Tensor::empty(dev, DType::Fp32, shape);
        tpurt::layer_norm(dev, fp32(xs, shape), fp32(gs, {cols}), fp32(bs, {cols}), out, eps);
        const std::vector<float> ys = out.to_vector<float>();
        double l = 0;
        for (std::size_t i = 0; i < ys.size(); ++i)
            l += double(ys[i]) * dy[i];
        return l;
    };
    const std::vector<float> grads[3] = {dx.to_vector<float>(), dgamma.to_vector<float>(),
                                         dbeta.to_vector<float>()};
    const auto check = [&](int which, std::size_t i) {
        std::vector<float> up[3] = {x, gamma, beta}, down[3] = {x, gamma, beta};
        up[which][i] += 1e-2f;
        down[which][i] -= 1e-2f;
        const double diff = (loss(up[0], up[1], up[2]) - loss(down[0], down[1], down[2])) /
                            (double(up[which][i]) - double(down[which][i]));
        CAPTURE(which, i, diff, grads[which][i]);
        REQUIRE(std::fabs(diff - grads[which][i]) <= 2e-3 + 2e-3 * std::fabs(diff));
    };
    for (std::size_t i : {0u, 40u, 500u, 791u})
        check(0, i);
    for (std::size_t c : {0u, 16u, 32u}) {
        check(1, c);
        check(2, c);
    }
}

TEST_CASE("layer norm refuses wrong operands") {
    tpurt::Device &dev = device();
    const Tensor x = Tensor::empty(dev, DType::Fp32, {3, 8}),
                 g = Tensor::empty(dev, DType::Fp32, {8});
    Tensor y = Tensor::empty(dev, DType::Fp32, {3, 8});
    require_refused([&] { tpurt::layer_norm(dev, x, Tensor::empty(dev, DType::Fp32, {7}), g, y); },
                    "gamma fp32[7]");
    require_refused(
        [&] {
            Tensor y2 = Tensor::empty(dev, DType::Fp32, {8, 3});
            tpurt::layer_norm(dev, x, g, g, y2);
        },
        "does not have the shape");
    require_refused(
        [&] {
            tpurt::layer_norm(dev, Tensor::empty(dev, DType::Bf16, {3, 8}), g, g, y);
        },
        "must be a densely packed fp32 tensor");
    require_refused([&] { tpurt::layer_norm(dev, x, g, g, y, -1.0f); }, "eps");
    Tensor dx = Tensor::empty(dev, DType::Fp32, {3, 8}), dg = Tensor::empty(dev, DType::Fp32, {8});
    Tensor db = Tensor::empty(dev, DType::Fp32, {9});
    require_refused([&] { tpurt::layer_norm_grad(dev, x, g, x, dx, dg, db); }, "dbeta fp32[9]");
}

TEST_CASE("sum, max and mean over every axis on the card") {
    tpurt::Device &dev = device();
    const std::vector<std::size_t> shape{3, 50, 7};
    const std::size_t n = 3 * 50 * 7;
    const auto v = small_ints(n, 5, 9);
    const auto at = [&](std::size_t i, std::size_t j, std::size_t k) {
        return v[(i * 50 + j) * 7 + k];
    };
    tpurt::Stream stream(dev);
    for (std::size_t axis = 0; axis < 3; ++axis) {
        CAPTURE(axis);
        std::vector<std::size_t> out_shape = shape;
        out_shape.erase(out_shape.begin() + static_cast<std::ptrdiff_t>(axis));
        // The reference: ascending along the axis, in fp32 (exact on small integers but for
        // the mean's one rounding).
        std::vector<float> sum, max, mean;
        const float inv = 1.0f / static_cast<float>(shape[axis]);
        for (std::size_t p = 0; p < out_shape[0]; ++p)
            for (std::size_t q = 0; q < out_shape[1]; ++q) {
                float s = 0, m = -1e30f;
                for (std::size_t t = 0; t < shape[axis]; ++t) {
                    const float e = axis == 0 ? at(t, p, q) : axis == 1 ? at(p, t, q) : at(p, q, t);
                    s += e;
                    m = std::max(m, e);
                }
                sum.push_back(s);
                max.push_back(m);
                mean.push_back(s * inv);
            }
        const Tensor a = fp32(v, shape);
        Tensor s = Tensor::empty(dev, DType::Fp32, out_shape),
               m = Tensor::empty(dev, DType::Fp32, out_shape);
        std::vector<std::size_t> kept = shape;
        kept[axis] = 1;
        Tensor mn = Tensor::empty(dev, DType::Fp32, kept);
        tpurt::reduce_axis(dev, ReduceOp::Sum, a, axis, s);
        tpurt::reduce_axis(dev, ReduceOp::Max, a, axis, m);
        tpurt::mean(stream, a, axis, mn);
        stream.synchronize();
        REQUIRE(s.to_vector<float>() == sum);
        REQUIRE(m.to_vector<float>() == max);
        REQUIRE(mn.to_vector<float>() == mean);

        // int8 sums into int32, bf16 maxima keep bf16 (stream forms).
        std::vector<std::int8_t> i8(n);
        std::vector<tpurt::Bf16> b16(n);
        for (std::size_t i = 0; i < n; ++i) {
            i8[i] = static_cast<std::int8_t>(v[i]);
            b16[i] = tpurt::Bf16::from_float(v[i]);
        }
        const Tensor ai = Tensor::from_host(dev, std::span<const std::int8_t>(i8), shape);
        const Tensor ab = Tensor::from_host(dev, std::span<const tpurt::Bf16>(b16), shape);
        Tensor si = Tensor::empty(dev, DType::Int32, out_shape),
               mb = Tensor::empty(dev, DType::Bf16, out_shape);
        tpurt::reduce_axis(stream, ReduceOp::Sum, ai, axis, si);
        tpurt::reduce_axis(stream, ReduceOp::Max, ab, axis, mb);
        stream.synchronize();
        const std::vector<std::int32_t> got_i = si.to_vector<std::int32_t>();
        const std::vector<tpurt::Bf16> got_b = mb.to_vector<tpurt::Bf16>();
        for (std::size_t i = 0; i < sum.size(); ++i) {
            REQUIRE(got_i[i] == static_cast<std::int32_t>(sum[i]));
            REQUIRE(got_b[i].to_float() == max[i]);
        }
    }
}

TEST_CASE("axis reductions refuse wrong operands") {
    tpurt::Device &dev = device();
    const Tensor a = Tensor::empty(dev, DType::Fp32, {4, 5});
    Tensor out = Tensor::empty(dev, DType::Fp32, {4});
    require_refused([&] { tpurt::reduce_axis(dev, ReduceOp::Sum, a, 2, out); }, "axis 2");
    require_refused([&] { tpurt::reduce_axis(dev, ReduceOp::Sum, a, 0, out); },
                    "shape without axis 0");
    Tensor i32 = Tensor::empty(dev, DType::Int32, {4});
    require_refused(
        [&] {
            tpurt::mean(dev, Tensor::empty(dev, DType::Int8, {4, 5}), 1, out);
        },
        "must be bf16 or fp32");
    require_refused([&] { tpurt::reduce_axis(dev, ReduceOp::Sum, a, 1, i32); }, "fp32 tensor");
    require_refused([&] { tpurt::reduce_axis(dev, ReduceOp::Sum, a.transpose(0, 1), 1, out); },
                    "densely packed");
}

TEST_CASE("batched matmul on the card: per-matrix b, a shared b, strided views, streams") {
    tpurt::Device &dev = device();
    const std::size_t B = 3, M = 5, K = 40, N = 9;
    const auto av = small_ints(B * M * K, 6, 4), bv = small_ints(B * K * N, 7, 4),
               sv = small_ints(K * N, 8, 4);
    const auto reference = [&](bool shared, std::size_t i, std::size_t m, std::size_t n) {
        float s = 0;
        for (std::size_t k = 0; k < K; ++k)
            s += av[(i * M + m) * K + k] * (shared ? sv[k * N + n] : bv[(i * K + k) * N + n]);
        return s;
    };
    const Tensor a = fp32(av, {B, M, K}), b = fp32(bv, {B, K, N}), shared_b = fp32(sv, {K, N});
    tpurt::Stream stream(dev);
    for (bool shared : {false, true}) {
        CAPTURE(shared);
        Tensor c = Tensor::empty(dev, DType::Fp32, {B, M, N});
        tpurt::batched_matmul(dev, a, shared ? shared_b : b, c);
        // c as a view with padded rows (the stream form).
        Tensor wide = Tensor::empty(dev, DType::Fp32, {B, M, N + 3});
        const Tensor cv = wide.slice(2, 0, N);
        tpurt::batched_matmul(stream, a, shared ? shared_b : b, cv);
        stream.synchronize();
        const std::vector<float> got = c.to_vector<float>(), got_view = cv.to_vector<float>();
        for (std::size_t i = 0; i < B; ++i)
            for (std::size_t m = 0; m < M; ++m)
                for (std::size_t n = 0; n < N; ++n) {
                    CAPTURE(i, m, n);
                    REQUIRE(got[(i * M + m) * N + n] == reference(shared, i, m, n));
                    REQUIRE(got_view[(i * M + m) * N + n] == reference(shared, i, m, n));
                }
    }
    // int8 and bf16, the batch of b strided (every second matrix of a larger tensor).
    std::vector<std::int8_t> ai(av.begin(), av.end());
    std::vector<std::int8_t> bi(2 * B * K * N);
    for (std::size_t i = 0; i < B * K * N; ++i)
        bi[(i / (K * N)) * 2 * K * N + i % (K * N)] = static_cast<std::int8_t>(bv[i]);
    const Tensor ta = Tensor::from_host(dev, std::span<const std::int8_t>(ai), {B, M, K});
    const Tensor tb = Tensor::from_host(dev, std::span<const std::int8_t>(bi), {2 * B, K, N});
    Tensor ci = Tensor::empty(dev, DType::Int32, {B, M, N});
    tpurt::batched_matmul(dev, ta, tb.slice(0, 0, 2 * B).reshape({B, 2, K, N}).select(1, 0), ci);
    std::vector<tpurt::Bf16> a16(av.size()), b16(bv.size());
    std::transform(av.begin(), av.end(), a16.begin(), tpurt::Bf16::from_float);
    std::transform(bv.begin(), bv.end(), b16.begin(), tpurt::Bf16::from_float);
    Tensor cb = Tensor::empty(dev, DType::Fp32, {B, M, N});
    tpurt::batched_matmul(dev, Tensor::from_host(dev, std::span<const tpurt::Bf16>(a16), {B, M, K}),
                          Tensor::from_host(dev, std::span<const tpurt::Bf16>(b16), {B, K, N}), cb);
    const std::vector<std::int32_t> got_i = ci.to_vector<std::int32_t>();
    const std::vector<float> got_b = cb.to_vector<float>();
    for (std::size_t i = 0; i < B; ++i)
        for (std::size_t m = 0; m < M; ++m)
            for (std::size_t n = 0; n < N; ++n) {
                REQUIRE(got_i[(i * M + m) * N + n] ==
                        static_cast<std::int32_t>(reference(false, i, m, n)));
                REQUIRE(got_b[(i * M + m) * N + n] == reference(false, i, m, n));
            }
    // Refusals.
    Tensor c = Tensor::empty(dev, DType::Fp32, {B, M, N});
    require_refused(
        [&] {
            tpurt::batched_matmul(dev, a, fp32(sv, {N, K}), c);
        },
        "shapes do not chain");
    require_refused([&] { tpurt::batched_matmul(dev, a.select(0, 0), shared_b, c); },
                    "must be [B, M, K]");
    require_refused([&] { tpurt::batched_matmul(dev, a, b, ci); }, "needs fp32");
}

TEST_CASE("permute on the card: every order of a rank-4 tensor, dtypes, large blocks, streams") {
    tpurt::Device &dev = device();
    const std::vector<std::size_t> shape{2, 3, 4, 5};
    const std::size_t n = 2 * 3 * 4 * 5;
    std::vector<float> v(n);
    std::iota(v.begin(), v.end(), 0.0f);
    const Tensor a = fp32(v, shape);
    std::vector<std::size_t> order{0, 1, 2, 3};
    tpurt::Stream stream(dev);
    do {
        CAPTURE(order[0], order[1], order[2], order[3]);
        const std::vector<std::size_t> out_shape{shape[order[0]], shape[order[1]], shape[order[2]],
                                                 shape[order[3]]};
        Tensor out = Tensor::empty(dev, DType::Fp32, out_shape);
        tpurt::permute(stream, a, order, out);
        stream.synchronize();
        // Element (i0, i1, i2, i3) of out is a's element with index i_k on axis order[k].
        const std::vector<float> got = out.to_vector<float>();
        std::size_t i = 0;
        std::size_t idx[4];
        for (idx[0] = 0; idx[0] < out_shape[0]; ++idx[0])
            for (idx[1] = 0; idx[1] < out_shape[1]; ++idx[1])
                for (idx[2] = 0; idx[2] < out_shape[2]; ++idx[2])
                    for (idx[3] = 0; idx[3] < out_shape[3]; ++idx[3]) {
                        std::size_t src[4];
                        for (std::size_t k = 0; k < 4; ++k)
                            src[order[k]] = idx[k];
                        REQUIRE(got[i++] == v[((src[0] * 3 + src[1]) * 4 + src[2]) * 5 + src[3]]);
                    }
    } while (std::next_permutation(order.begin(), order.end()));

    // bf16 [1, 300, 257] -> [257, 1, 300] and int8 [70, 1, 3, 129] -> [129, 3, 70, 1] (axes of
    // one element, merged axes, blocks larger than one TRANSPOSE row).
    const std::size_t r = 300, c = 257;
    std::vector<tpurt::Bf16> b16(r * c);
    for (std::size_t i = 0; i < b16.size(); ++i)
        b16[i] = tpurt::Bf16::from_float(static_cast<float>(i % 251));
    const Tensor ab = Tensor::from_host(dev, std::span<const tpurt::Bf16>(b16), {1, r, c});
    Tensor ob = Tensor::empty(dev, DType::Bf16, {c, 1, r});
    const std::size_t bo[] = {2, 0, 1};
    tpurt::permute(dev, ab, bo, ob);
    const std::vector<tpurt::Bf16> got_b = ob.to_vector<tpurt::Bf16>();
    for (std::size_t i = 0; i < r; ++i)
        for (std::size_t j = 0; j < c; ++j)
            REQUIRE(got_b[j * r + i].to_float() == b16[i * c + j].to_float());
    std::vector<std::int8_t> i8(70 * 3 * 129);
    for (std::size_t i = 0; i < i8.size(); ++i)
        i8[i] = static_cast<std::int8_t>(i * 7);
    const Tensor ai = Tensor::from_host(dev, std::span<const std::int8_t>(i8), {70, 1, 3, 129});
    Tensor oi = Tensor::empty(dev, DType::Int8, {129, 3, 70, 1});
    const std::size_t io[] = {3, 2, 0, 1};
    tpurt::permute(dev, ai, io, oi);
    const std::vector<std::int8_t> got_i = oi.to_vector<std::int8_t>();
    for (std::size_t p = 0; p < 70; ++p)
        for (std::size_t q = 0; q < 3; ++q)
            for (std::size_t t = 0; t < 129; ++t)
                REQUIRE(got_i[(t * 3 + q) * 70 + p] == i8[(p * 3 + q) * 129 + t]);

    const std::size_t twice[] = {0, 0, 1, 2};
    Tensor out = Tensor::empty(dev, DType::Fp32, shape);
    require_refused([&] { tpurt::permute(dev, a, twice, out); }, "each of a");
    Tensor reversed = Tensor::empty(dev, DType::Fp32, {5, 4, 3, 2});
    require_refused([&] { tpurt::permute(dev, a, order, reversed); }, "shape permuted");
}

TEST_CASE("grouped, depthwise and dilated conv2d on the card: plain loops, streams, refusals") {
    tpurt::Device &dev = device();
    struct Case {
        std::size_t n, h, w, c, kh, kw, f;
        tpurt::ConvGrouping grouping;
        tpurt::Conv2dParams params;
    };
    for (const Case &k :
         {Case{2, 7, 6, 6, 3, 3, 9, {.groups = 3}, {.stride_h = 2, .pad_h = 1, .pad_w = 1}},
          Case{1, 5, 5, 4, 3, 2, 8, {.groups = 4}, {.pad_h = 1}},
          Case{2, 9, 8, 3, 3, 3, 5, {.dilation_h = 2, .dilation_w = 3}, {.pad_h = 2, .pad_w = 1}},
          Case{1,
               8,
               9,
               4,
               2,
               3,
               6,
               {.groups = 2, .dilation_h = 3, .dilation_w = 2},
               {.stride_w = 2}}}) {
        const tpurt::ConvGrouping &gr = k.grouping;
        CAPTURE(gr.groups, gr.dilation_h, gr.dilation_w, k.c, k.f);
        const std::size_t cg = k.c / gr.groups, fg = k.f / gr.groups;
        const std::size_t ekh = (k.kh - 1) * gr.dilation_h + 1,
                          ekw = (k.kw - 1) * gr.dilation_w + 1;
        const std::size_t oh = (k.h + 2 * k.params.pad_h - ekh) / k.params.stride_h + 1;
        const std::size_t ow = (k.w + 2 * k.params.pad_w - ekw) / k.params.stride_w + 1;
        const auto x = small_ints(k.n * k.h * k.w * k.c, 9, 4);
        const auto wv = small_ints(k.kh * k.kw * cg * k.f, 10, 4);
        std::vector<float> want(k.n * oh * ow * k.f, 0.0f);
        for (std::size_t b = 0; b < k.n; ++b)
            for (std::size_t oy = 0; oy < oh; ++oy)
                for (std::size_t ox = 0; ox < ow; ++ox)
                    for (std::size_t f = 0; f < k.f; ++f) {
                        const std::size_t g = f / fg;
                        double s = 0;
                        for (std::size_t ky = 0; ky < k.kh; ++ky)
                            for (std::size_t kx = 0; kx < k.kw; ++kx) {
                                const long iy = long(oy * k.params.stride_h + ky * gr.dilation_h) -
                                                long(k.params.pad_h);
                                const long ix = long(ox * k.params.stride_w + kx * gr.dilation_w) -
                                                long(k.params.pad_w);
                                if (iy < 0 || ix < 0 || iy >= long(k.h) || ix >= long(k.w))
                                    continue;
                                for (std::size_t ci = 0; ci < cg; ++ci)
                                    s +=
                                        double(x[((b * k.h + iy) * k.w + ix) * k.c + g * cg + ci]) *
                                        wv[((ky * k.kw + kx) * cg + ci) * k.f + f];
                            }
                        want[((b * oh + oy) * ow + ox) * k.f + f] = static_cast<float>(s);
                    }
        const Tensor xt = fp32(x, {k.n, k.h, k.w, k.c}), wt = fp32(wv, {k.kh, k.kw, cg, k.f});
        Tensor out = Tensor::empty(dev, DType::Fp32, {k.n, oh, ow, k.f});
        tpurt::grouped_conv2d(dev, xt, wt, out, gr, k.params);
        REQUIRE(out.to_vector<float>() == want);
        tpurt::Stream stream(dev);
        Tensor out2 = Tensor::empty(dev, DType::Fp32, {k.n, oh, ow, k.f});
        tpurt::grouped_conv2d(stream, xt, wt, out2, gr, k.params);
        stream.synchronize();
        REQUIRE(out2.to_vector<float>() == want);
    }
    const Tensor x = Tensor::empty(dev, DType::Fp32, {1, 4, 4, 6});
    Tensor out = Tensor::empty(dev, DType::Fp32, {1, 2, 2, 4});
    require_refused(
        [&] {
            tpurt::grouped_conv2d(dev, x, Tensor::empty(dev, DType::Fp32, {3, 3, 2, 4}), out,
                                  {.groups = 4});
        },
        "multiples of 4 groups");
    require_refused(
        [&] {
            tpurt::grouped_conv2d(dev, x, Tensor::empty(dev, DType::Bf16, {3, 3, 3, 4}), out,
                                  {.groups = 2});
        },
        "densely packed tensors of one input dtype");
    require_refused(
        [&] {
            tpurt::grouped_conv2d(dev, x, Tensor::empty(dev, DType::Fp32, {3, 3, 6, 4}), out,
                                  {.dilation_h = 0});
        },
        "dilations must be at least 1");
}

TEST_CASE("grouped conv2d gradients against central differences of the card's forward pass") {
    tpurt::Device &dev = device();
    const std::size_t n = 2, h = 5, w = 6, c = 4, f = 6, k = 3;
    const std::uint32_t groups = 2;
    const tpurt::Conv2dParams params{.pad_h = 1, .pad_w = 1};
    const auto x = small_ints(n * h * w * c, 11, 4),
               wv = small_ints(k * k * (c / groups) * f, 12, 4);
    const auto r = small_ints(n * h * w * f, 13, 4); // dy: L = sum(y r), output [n, h, w, f]
    const std::vector<std::size_t> xs{n, h, w, c}, ws{k, k, c / groups, f}, ys{n, h, w, f};
    const auto loss = [&](const std::vector<float> &xv, const std::vector<float> &wvv) {
        Tensor y = Tensor::empty(dev, DType::Fp32, ys);
        tpurt::grouped_conv2d(dev, fp32(xv, xs), fp32(wvv, ws), y, {.groups = groups}, params);
        const std::vector<float> yv = y.to_vector<float>();
        double l = 0;
        for (std::size_t i = 0; i < yv.size(); ++i)
            l += double(yv[i]) * r[i];
        return l;
    };
    Tensor dx = Tensor::empty(dev, DType::Fp32, xs), dw = Tensor::empty(dev, DType::Fp32, ws);
    const Tensor dy = fp32(r, ys);
    tpurt::grouped_conv2d_input_grad(dev, dy, fp32(wv, ws), dx, groups, params);
    tpurt::grouped_conv2d_weight_grad(dev, fp32(x, xs), dy, dw, groups, params);
    const std::vector<float> gx = dx.to_vector<float>(), gw = dw.to_vector<float>();
    // The loss is linear in each operand and every value a small integer: central differences
    // with h = 1 are exact.
    for (std::size_t i : {0u, 5u, 77u, 123u, 239u}) {
        std::vector<float> up = x, down = x;
        up[i] += 1;
        down[i] -= 1;
        CAPTURE(i);
        REQUIRE((loss(up, wv) - loss(down, wv)) / 2 == gx[i]);
    }
    for (std::size_t i : {0u, 7u, 30u, 53u}) {
        std::vector<float> up = wv, down = wv;
        up[i] += 1;
        down[i] -= 1;
        CAPTURE(i);
        REQUIRE((loss(x, up) - loss(x, down)) / 2 == gw[i]);
    }
    require_refused(
        [&] {
            Tensor bad = Tensor::empty(dev, DType::Fp32, {n, h, w, 5});
            tpurt::grouped_conv2d_input_grad(dev, dy, fp32(wv, ws), bad, groups, params);
        },
        "multiples of 2 groups");
}
