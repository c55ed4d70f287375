// SPDX-License-Identifier: MIT
// test_train_ops.cpp - guest test: the training ops on tensors on the real card (spec 1.4):
// softmax cross-entropy (loss and gradient against double formulas, the gradient against central
// finite differences of the card's loss), activation gradients against their derivatives, SGD
// with momentum and Adam bit for bit against their binary32 steps (bf16 copy included), the
// backward matmuls A^T B and A B^T and the bias gradient against reference loops (exact on
// small integers), division and LOG, max and average pooling with padding (forward, gradients
// against reference_pool_grad and finite differences), and refusals of mismatched tensors.
#include <tpurt/codegen/train_compiler.hpp>
#include <tpurt/golden/reference_pool_grad.hpp>
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/tpurt.hpp>

#include "runtime_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

namespace {

using tpurt::DType;
using tpurt::GradFunction;
using tpurt::Tensor;

using guest_test::device;
using guest_test::require_refused;

Tensor fp32(const std::vector<float> &v, std::vector<std::size_t> shape) {
    return Tensor::from_host(device(), std::span<const float>(v), std::move(shape));
}

} // namespace

TEST_CASE("softmax cross-entropy on the card: loss, gradient, finite differences") {
    tpurt::Device &dev = device();
    const std::size_t rows = 5, cols = 10;
    const std::vector<float> x = tpurt::uniform_fp32(rows * cols, 1, -6.0f, 6.0f);
    std::vector<float> t(rows * cols, 0.0f);
    for (std::size_t r = 0; r < rows; ++r)
        t[r * cols + (r * 3) % cols] = 1.0f;
    const Tensor tt = fp32(t, {rows, cols});
    const float scale = 1.0f / rows;
    const auto run = [&](const std::vector<float> &xs, std::vector<float> *grad) {
        const Tensor xt = fp32(xs, {rows, cols});
        Tensor loss = Tensor::empty(dev, DType::Fp32, {rows});
        Tensor g = Tensor::empty(dev, DType::Fp32, {rows, cols});
        tpurt::softmax_cross_entropy(dev, xt, tt, loss, g, scale);
        if (grad)
            *grad = g.to_vector<float>();
        return loss.to_vector<float>();
    };
    std::vector<float> grad;
    const std::vector<float> loss = run(x, &grad);
    double total = 0;
    for (std::size_t r = 0; r < rows; ++r) {
        double m = x[r * cols], s = 0;
        for (std::size_t c = 0; c < cols; ++c)
            m = std::max(m, double(x[r * cols + c]));
        for (std::size_t c = 0; c < cols; ++c)
            s += std::exp(x[r * cols + c] - m);
        for (std::size_t c = 0; c < cols; ++c) {
            const double p = std::exp(x[r * cols + c] - m) / s;
            REQUIRE(std::fabs(grad[r * cols + c] - scale * (p - t[r * cols + c])) <= 1e-6);
            if (t[r * cols + c] == 1.0f)
                REQUIRE(std::fabs(loss[r] + std::log(p)) <= 1e-5 + 1e-6 * std::fabs(std::log(p)));
        }
        total += loss[r];
    }
    // Central differences of scale x sum(loss), h = 1e-2: tolerance 5e-4 (truncation and the
    // fp32 loss's rounding over 2h; see tests/runtime/ops/train_test.cpp).
    for (std::size_t i : {0u, 7u, 23u, 49u}) {
        std::vector<float> up = x, down = x;
        up[i] += 1e-2f;
        down[i] -= 1e-2f;
        double fu = 0, fd = 0;
        for (float l : run(up, nullptr))
            fu += l;
        for (float l : run(down, nullptr))
            fd += l;
        const double diff = scale * (fu - fd) / (double(up[i]) - double(down[i]));
        CAPTURE(i, diff, grad[i]);
        REQUIRE(std::fabs(diff - grad[i]) <= 5e-4);
    }
}

TEST_CASE("activation gradients on the card") {
    tpurt::Device &dev = device();
    const std::size_t n = 1001;
    const std::vector<float> x = tpurt::uniform_fp32(n, 2, -4.0f, 4.0f),
                             dy = tpurt::uniform_fp32(n, 3, -1.0f, 1.0f);
    const Tensor xt = fp32(x, {7, 143}), dyt = fp32(dy, {7, 143});
    for (GradFunction f :
         {GradFunction::Relu, GradFunction::Sigmoid, GradFunction::Tanh, GradFunction::Gelu}) {
        CAPTURE(tpurt::grad_function_name(f));
        Tensor saved = Tensor::empty(dev, DType::Fp32, {7, 143});
        if (f == GradFunction::Sigmoid)
            tpurt::unary(dev, tpurt::Activation::Sigmoid, xt, saved);
        else if (f == GradFunction::Tanh)
            tpurt::unary(dev, tpurt::Activation::Tanh, xt, saved);
        else
            saved = xt;
        Tensor dx = Tensor::empty(dev, DType::Fp32, {7, 143});
        tpurt::activation_grad(dev, f, saved, dyt, dx);
        const std::vector<float> got = dx.to_vector<float>();
        for (std::size_t i = 0; i < n; ++i) {
            const double v = x[i];
            double d = 0;
            if (f == GradFunction::Relu) {
                d = v > 0;
            } else if (f == GradFunction::Sigmoid) {
                const double s = 1 / (1 + std::exp(-v));
                d = s * (1 - s);
            } else if (f == GradFunction::Tanh) {
                d = 1 - std::tanh(v) * std::tanh(v);
            } else {
                const auto g = [](double z) {
                    return 0.5 * z *
                           (1 + std::tanh(std::sqrt(2 / M_PI) * (z + 0.044715 * z * z * z)));
                };
                d = (g(v + 1e-6) - g(v - 1e-6)) / 2e-6;
            }
            CAPTURE(i, v, got[i], d * dy[i]);
            REQUIRE(std::fabs(got[i] - d * dy[i]) <=
                    1e-5 * (std::fabs(dy[i]) + std::fabs(d * dy[i])) + 1e-30);
        }
    }
}

TEST_CASE("SGD with momentum and Adam on the card equal their binary32 steps") {
    tpurt::Device &dev = device();
    const std::size_t n = 3000;
    std::vector<float> w = tpurt::uniform_fp32(n, 4, -1, 1),
                       g = tpurt::uniform_fp32(n, 5, -0.5f, 0.5f);
    std::vector<float> m(n, 0.0f), v(n, 0.0f);
    Tensor wt = fp32(w, {n}), gt = fp32(g, {n}), mt = fp32(m, {n}), vt = fp32(v, {n});
    Tensor wb = Tensor::empty(dev, DType::Bf16, {n});
    for (std::uint64_t step = 1; step <= 2; ++step) {
        const auto hp = tpurt::adam_hyperparameters(1e-3f, 0.9f, 0.999f, 1e-8f, 0.0f, step);
        const Tensor hpt = fp32(std::vector<float>(hp.begin(), hp.end()), {8});
        tpurt::adam_step(dev, wt, gt, mt, vt, hpt, &wb);
        for (std::size_t i = 0; i < n; ++i) {
            const float gi = g[i] + w[i] * hp[7];
            m[i] = m[i] * hp[1] + gi * hp[2];
            v[i] = v[i] * hp[3] + (gi * gi) * hp[4];
            w[i] = w[i] - (m[i] / (std::sqrt(v[i]) * hp[5] + hp[6])) * hp[0];
        }
        REQUIRE(wt.to_vector<float>() == w);
        REQUIRE(mt.to_vector<float>() == m);
        REQUIRE(vt.to_vector<float>() == v);
        const std::vector<tpurt::Bf16> copy = wb.to_vector<tpurt::Bf16>();
        for (std::size_t i = 0; i < n; ++i)
            REQUIRE(copy[i].bits == tpurt::Bf16::from_float(w[i]).bits);
    }
    const auto hp = tpurt::sgd_hyperparameters(0.1f, 0.9f, 0.0f);
    tpurt::sgd_momentum_step(dev, wt, gt, mt, fp32(std::vector<float>(hp.begin(), hp.end()), {8}));
    for (std::size_t i = 0; i < n; ++i) {
        m[i] = m[i] * hp[1] + (g[i] + w[i] * hp[2]);
        w[i] = w[i] - m[i] * hp[0];
    }
    REQUIRE(wt.to_vector<float>() == w);
    REQUIRE(mt.to_vector<float>() == m);
}

TEST_CASE("backward matmuls, bias gradient, division and log on the card") {
    tpurt::Device &dev = device();
    const std::size_t m = 37, k = 5, n = 19;
    std::vector<float> a(m * k), b(m * n), bt(n * k);
    std::mt19937 rng(6);
    for (float &x : a)
        x = float(int(rng() % 9) - 4);
    for (float &x : b)
        x = float(int(rng() % 9) - 4);
    for (float &x : bt)
        x = float(int(rng() % 9) - 4);
    const Tensor at = fp32(a, {m, k}), btt = fp32(b, {m, n}), bnt = fp32(bt, {n, k});
    Tensor c1 = Tensor::empty(dev, DType::Fp32, {k, n});
    tpurt::matmul_tn(dev, at, btt, c1); // a^T b: small integers, exact
    Tensor c2 = Tensor::empty(dev, DType::Fp32, {m, n});
    tpurt::matmul_nt(dev, at, bnt, c2); // a bt^T
    Tensor sums = Tensor::empty(dev, DType::Fp32, {n});
    tpurt::column_sums(dev, btt, sums);
    const std::vector<float> g1 = c1.to_vector<float>(), g2 = c2.to_vector<float>(),
                             g3 = sums.to_vector<float>();
    for (std::size_t i = 0; i < k; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            float s = 0;
            for (std::size_t r = 0; r < m; ++r)
                s += a[r * k + i] * b[r * n + j];
            REQUIRE(g1[i * n + j] == s);
        }
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            float s = 0;
            for (std::size_t r = 0; r < k; ++r)
                s += a[i * k + r] * bt[j * k + r];
            REQUIRE(g2[i * n + j] == s);
        }
    for (std::size_t j = 0; j < n; ++j) {
        float s = 0;
        for (std::size_t r = 0; r < m; ++r)
            s += b[r * n + j];
        REQUIRE(g3[j] == s);
    }
    const std::vector<float> num = tpurt::uniform_fp32(300, 7, -10, 10),
                             den = tpurt::uniform_fp32(300, 8, 0.5f, 3);
    Tensor q = Tensor::empty(dev, DType::Fp32, {3, 100});
    tpurt::divide(dev, fp32(num, {3, 100}), fp32(den, {3, 100}), q);
    Tensor lg = Tensor::empty(dev, DType::Fp32, {3, 100});
    tpurt::unary(dev, tpurt::Activation::Log, fp32(den, {3, 100}), lg);
    const std::vector<float> qv = q.to_vector<float>(), lv = lg.to_vector<float>();
    for (std::size_t i = 0; i < 300; ++i) {
        REQUIRE(qv[i] == num[i] / den[i]);                                  // IEEE division
        REQUIRE(std::fabs(lv[i] - std::log(double(den[i]))) <= 1.2e-7 * 2); // <= 1 ulp
    }
}

TEST_CASE("conv2d input and weight gradients and max pooling's gradient on the card") {
    tpurt::Device &dev = device();
    const std::size_t n = 2, h = 6, w = 5, c = 3, f = 4, k = 3, pad = 1;
    const std::size_t oh = h + 2 * pad - k + 1, ow = w + 2 * pad - k + 1;
    std::mt19937 rng(9);
    const auto ints = [&](std::size_t count) {
        std::vector<float> v(count);
        for (float &x : v)
            x = float(int(rng() % 7) - 3);
        return v;
    };
    const std::vector<float> x = ints(n * h * w * c), wt = ints(k * k * c * f),
                             dy = ints(n * oh * ow * f);
    const Tensor xt = fp32(x, {n, h, w, c}), wtt = fp32(wt, {k, k, c, f}),
                 dyt = fp32(dy, {n, oh, ow, f});
    const tpurt::Conv2dParams params{.pad_h = pad, .pad_w = pad};
    Tensor dx = Tensor::empty(dev, DType::Fp32, {n, h, w, c});
    Tensor dw = Tensor::empty(dev, DType::Fp32, {k, k, c, f});
    tpurt::conv2d_input_grad(dev, dyt, wtt, dx, params);
    tpurt::conv2d_weight_grad(dev, xt, dyt, dw, params);
    // Reference: scatter every product of the forward convolution (small integers: exact).
    std::vector<float> want_dx(x.size(), 0.0f), want_dw(wt.size(), 0.0f);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t oy = 0; oy < oh; ++oy)
            for (std::size_t ox = 0; ox < ow; ++ox)
                for (std::size_t a = 0; a < k; ++a)
                    for (std::size_t b = 0; b < k; ++b) {
                        const long iy = long(oy + a) - long(pad), ix = long(ox + b) - long(pad);
                        if (iy < 0 || ix < 0 || iy >= long(h) || ix >= long(w))
                            continue;
                        for (std::size_t ch = 0; ch < c; ++ch)
                            for (std::size_t fo = 0; fo < f; ++fo) {
                                const float g = dy[((i * oh + oy) * ow + ox) * f + fo];
                                const std::size_t xi = ((i * h + iy) * w + ix) * c + ch;
                                const std::size_t wi = ((a * k + b) * c + ch) * f + fo;
                                want_dx[xi] += g * wt[wi];
                                want_dw[wi] += g * x[xi];
                            }
                    }
    REQUIRE(dx.to_vector<float>() == want_dx);
    REQUIRE(dw.to_vector<float>() == want_dw);

    // Max pooling 2 x 2 of x's first channel layout: the first maximum of each window gets dy.
    Tensor y = Tensor::empty(dev, DType::Fp32, {n, h / 2, 2, c});
    const Tensor xs = fp32(std::vector<float>(x.begin(), x.begin() + n * h * 4 * c), {n, h, 4, c});
    tpurt::pool2d(dev, tpurt::PoolOp::Max, xs, y, 2, 2, 2, 2);
    const std::vector<float> pdy = tpurt::uniform_fp32(y.element_count(), 10, -1, 1);
    Tensor pdx = Tensor::empty(dev, DType::Fp32, {n, h, 4, c});
    tpurt::max_pool2d_grad(dev, xs, y, fp32(pdy, {n, h / 2, 2, c}), pdx, 2);
    const std::vector<float> xv = xs.to_vector<float>(), yv = y.to_vector<float>(),
                             got = pdx.to_vector<float>();
    std::vector<float> want(xv.size(), 0.0f);
    for (std::size_t o = 0; o < yv.size(); ++o) {
        const std::size_t ch = o % c, ox = (o / c) % 2, oy = (o / c / 2) % (h / 2),
                          i = o / c / 2 / (h / 2);
        bool taken = false;
        for (std::size_t a = 0; a < 2; ++a)
            for (std::size_t b = 0; b < 2; ++b) {
                const std::size_t at = ((i * h + 2 * oy + a) * 4 + 2 * ox + b) * c + ch;
                if (!taken && xv[at] == yv[o]) {
                    want[at] = pdy[o];
                    taken = true;
                }
            }
    }
    REQUIRE(got == want);
}

TEST_CASE("pooling with padding on the card: forward, gradients, finite differences") {
    tpurt::Device &dev = device();
    // 3 x 3 windows at stride 2 padded by 1 (ResNet's stem pooling) on odd-sized images.
    const std::size_t n = 2, h = 7, w = 9, c = 3;
    const tpurt::PoolWindow win{
        .window_h = 3, .window_w = 3, .stride_h = 2, .stride_w = 2, .pad_h = 1, .pad_w = 1};
    const std::size_t oh = (h + 2 - 3) / 2 + 1, ow = (w + 2 - 3) / 2 + 1;
    const std::vector<float> x = tpurt::uniform_fp32(n * h * w * c, 21, -3.0f, 3.0f);
    const std::vector<float> dy = tpurt::uniform_fp32(n * oh * ow * c, 22, -1.0f, 1.0f);
    const tpurt::PoolGradProblem problem{.op = tpurt::PoolOp::Max,
                                         .batch = n,
                                         .height = h,
                                         .width = w,
                                         .channels = c,
                                         .window_h = 3,
                                         .window_w = 3,
                                         .stride_h = 2,
                                         .stride_w = 2,
                                         .pad_h = 1,
                                         .pad_w = 1};
    const auto pool = [&](tpurt::PoolOp op, const std::vector<float> &xs) {
        Tensor y = Tensor::empty(dev, DType::Fp32, {n, oh, ow, c});
        tpurt::pool2d(dev, op, fp32(xs, {n, h, w, c}), y, win);
        return y.to_vector<float>();
    };
    // The forward against loops over the windows' pixels of the image (AVG: the padding's zeros
    // counted, the window's 9 dividing).
    const std::vector<float> ymax = pool(tpurt::PoolOp::Max, x), yavg = pool(tpurt::PoolOp::Avg, x);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t oy = 0; oy < oh; ++oy)
            for (std::size_t ox = 0; ox < ow; ++ox)
                for (std::size_t ch = 0; ch < c; ++ch) {
                    float m = -INFINITY, sum = 0;
                    for (std::size_t a = 0; a < 3; ++a)
                        for (std::size_t b = 0; b < 3; ++b) {
                            const long iy = long(2 * oy + a) - 1, ix = long(2 * ox + b) - 1;
                            const bool inside = iy >= 0 && ix >= 0 && iy < long(h) && ix < long(w);
                            const float v = inside ? x[((i * h + iy) * w + ix) * c + ch] : 0.0f;
                            m = inside ? std::max(m, v) : m;
                            sum = a + b == 0 ? v : sum + v;
                        }
                    const std::size_t o = ((i * oh + oy) * ow + ox) * c + ch;
                    REQUIRE(ymax[o] == m);
                    REQUIRE(yavg[o] == sum / 9.0f);
                }
    // The gradients against reference_pool_grad, bit for bit, and central finite differences of
    // sum(dy y).
    for (tpurt::PoolOp op : {tpurt::PoolOp::Max, tpurt::PoolOp::Avg}) {
        const std::vector<float> &y = op == tpurt::PoolOp::Max ? ymax : yavg;
        Tensor dx = Tensor::empty(dev, DType::Fp32, {n, h, w, c});
        if (op == tpurt::PoolOp::Max)
            tpurt::max_pool2d_grad(dev, fp32(x, {n, h, w, c}), fp32(y, {n, oh, ow, c}),
                                   fp32(dy, {n, oh, ow, c}), dx, win);
        else
            tpurt::avg_pool2d_grad(dev, fp32(dy, {n, oh, ow, c}), dx, win);
        tpurt::PoolGradProblem p = problem;
        p.op = op;
        const std::vector<float> got = dx.to_vector<float>();
        REQUIRE(got == tpurt::reference_pool_grad(p, x, y, dy));
        for (std::size_t at :
             {std::size_t{0}, std::size_t{w * c - 1}, x.size() / 2, x.size() - 1}) {
            std::vector<float> up = x, down = x;
            up[at] += 1e-3f;
            down[at] -= 1e-3f;
            const std::vector<float> yu = pool(op, up), yd = pool(op, down);
            double diff = 0;
            for (std::size_t o = 0; o < y.size(); ++o)
                diff += (double(yu[o]) - yd[o]) * dy[o];
            diff /= double(up[at]) - double(down[at]);
            CAPTURE(at, diff, got[at]);
            REQUIRE(std::fabs(diff - got[at]) <= 2e-3);
        }
    }
    Tensor y = Tensor::empty(dev, DType::Fp32, {n, oh, ow, c});
    tpurt::PoolWindow too_much = win;
    too_much.pad_h = 3;
    require_refused(
        [&] {
            tpurt::pool2d(dev, tpurt::PoolOp::Max, fp32(x, {n, h, w, c}), y, too_much);
        },
        "padding be below the window");
    Tensor dx = Tensor::empty(dev, DType::Fp32, {n, h, w, c});
    require_refused(
        [&] {
            tpurt::avg_pool2d_grad(dev, fp32(x, {n, h, w, c}), dx, win);
        },
        "the forward pool2d()'s output shape");
}

TEST_CASE("training ops refuse mismatched tensors") {
    tpurt::Device &dev = device();
    const Tensor x = Tensor::empty(dev, DType::Fp32, {4, 6});
    Tensor wrong = Tensor::empty(dev, DType::Fp32, {4, 5});
    Tensor loss = Tensor::empty(dev, DType::Fp32, {3});
    Tensor grad = Tensor::empty(dev, DType::Fp32, {4, 6});
    Tensor i8 = Tensor::empty(dev, DType::Int8, {4, 6});
    require_refused([&] { tpurt::softmax(dev, x, wrong); }, "does not have the shape");
    require_refused([&] { tpurt::softmax(dev, i8, grad); }, "densely packed fp32 or bf16");
    require_refused([&] { tpurt::softmax_cross_entropy(dev, x, x, loss, grad, 1.0f); },
                    "one element per row");
    require_refused([&] { tpurt::activation_grad(dev, GradFunction::Relu, x, wrong, grad); },
                    "does not have the shape");
    Tensor w = Tensor::empty(dev, DType::Fp32, {24});
    Tensor m = Tensor::empty(dev, DType::Fp32, {24});
    const Tensor hp = Tensor::empty(dev, DType::Fp32, {7});
    require_refused([&] { tpurt::sgd_momentum_step(dev, w, w, m, hp); }, "8 fp32 hyperparameters");
    // The two-part ops name themselves and the caller's shapes, not their scratch tensor's.
    Tensor c = Tensor::empty(dev, DType::Fp32, {6, 5});
    require_refused([&] { tpurt::matmul_tn(dev, x, wrong, grad); },
                    "matmul_tn: shapes do not chain: a^T fp32[4, 6]");
    require_refused([&] { tpurt::matmul_nt(dev, x, wrong, c); }, "matmul_nt: shapes do not chain");
    require_refused([&] { tpurt::matmul_tn(dev, i8, x, c); }, "matmul_tn: a int8[4, 6]");
    require_refused([&] { tpurt::column_sums(dev, x, loss); },
                    "column_sums: out fp32[3] must be a densely packed fp32 tensor of 6 elements");
}
