// SPDX-License-Identifier: MIT
// test_train_bf16.cpp - guest test: the training ops with bf16 operands on the real card. Every
// dtype combination of activation_grad, softmax / log_softmax / softmax_cross_entropy and the
// pooling gradients equals, bit for bit, the fp32 op on the host-widened inputs with its results
// rounded to bf16 on the host (signed zeros, subnormals, NaN, infinities and rounding ties among
// the values); the ReLU, sigmoid, tanh and pooling gradients also equal their binary32 steps on
// the host. The backward matmuls, column sums and convolution gradients of bf16 operands at
// awkward shapes (K and channels beyond the array and not multiples of 32) equal the CPU golden
// model (reference.hpp, reference_conv2d) and, on small integers, the plain sums. Refusals name
// the op and the dtypes.
#include <tpurt/golden/reference.hpp>
#include <tpurt/golden/reference_conv2d.hpp>
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/tpurt.hpp>

#include "runtime_helpers.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace {

using tpurt::Bf16;
using tpurt::DType;
using tpurt::GradFunction;
using tpurt::Tensor;

using guest_test::device;
using guest_test::require_refused;

const DType both[] = {DType::Fp32, DType::Bf16};

// The values a tensor of `type` holds: v, rounded to bf16 for bf16.
std::vector<float> representable(DType type, std::vector<float> v) {
    if (type == DType::Bf16)
        for (float &x : v)
            x = Bf16::from_float(x).to_float();
    return v;
}

Tensor tensor(DType type, const std::vector<float> &v, std::vector<std::size_t> shape) {
    if (type == DType::Fp32)
        return Tensor::from_host(device(), std::span<const float>(v), std::move(shape));
    std::vector<Bf16> b(v.size());
    for (std::size_t i = 0; i < v.size(); ++i)
        b[i] = Bf16::from_float(v[i]);
    return Tensor::from_host(device(), std::span<const Bf16>(b), std::move(shape));
}

// The card's result in `type` for the fp32 result x: x, or x rounded to nearest even (NaN 0x7fc0).
std::uint32_t card_bits(DType type, float x) {
    if (type == DType::Fp32)
        return std::isnan(x) ? 0x7fc00000u : std::bit_cast<std::uint32_t>(x);
    return std::isnan(x) ? 0x7fc0u : Bf16::from_float(x).bits;
}

// t (fp32 or bf16) holds the fp32 results `want`, rounded to its dtype, bit for bit.
void require_rounded(const Tensor &t, const std::vector<float> &want) {
    std::vector<std::uint32_t> got;
    if (t.dtype() == DType::Fp32)
        for (float v : t.to_vector<float>())
            got.push_back(std::bit_cast<std::uint32_t>(v));
    else
        for (Bf16 v : t.to_vector<Bf16>())
            got.push_back(v.bits);
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
        CAPTURE(i, want[i], tpurt::dtype_name(t.dtype()));
        REQUIRE(got[i] == card_bits(t.dtype(), want[i]));
    }
}

// Uniform values with the special cases spread among them.
std::vector<float> with_specials(std::size_t n, unsigned seed, float lo, float hi) {
    std::vector<float> v = tpurt::uniform_fp32(n, seed, lo, hi);
    const float specials[] = {0.0f,
                              -0.0f,
                              0x1p-149f,
                              -0x1p-130f,
                              std::bit_cast<float>(0x00010000u),
                              std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity(),
                              std::numeric_limits<float>::quiet_NaN(),
                              1.0f + 0x1p-8f,
                              -3.0e38f,
                              1.0f + 0x1p-7f + 0x1p-8f};
    for (std::size_t i = 0; i < n && i < std::size(specials); ++i)
        v[(i * 13) % n] = specials[i];
    return v;
}

std::vector<float> fp32_of(const Tensor &t) {
    if (t.dtype() == DType::Fp32)
        return t.to_vector<float>();
    std::vector<float> out;
    for (Bf16 v : t.to_vector<Bf16>())
        out.push_back(v.to_float());
    return out;
}

} // namespace

TEST_CASE("activation gradients of every fp32 / bf16 combination on the card") {
    tpurt::Device &dev = device();
    const std::vector<std::size_t> shape{7, 143};
    const std::size_t n = 7 * 143;
    const std::vector<float> x0 = with_specials(n, 21, -4.0f, 4.0f),
                             dy0 = with_specials(n, 22, -2.0f, 2.0f);
    for (GradFunction f :
         {GradFunction::Relu, GradFunction::Sigmoid, GradFunction::Tanh, GradFunction::Gelu})
        for (DType xt : both)
            for (DType dyt : both)
                for (DType dxt : both) {
                    CAPTURE(tpurt::grad_function_name(f), tpurt::dtype_name(xt),
                            tpurt::dtype_name(dyt), tpurt::dtype_name(dxt));
                    const std::vector<float> x = representable(xt, x0),
                                             dy = representable(dyt, dy0);
                    Tensor dx = Tensor::empty(dev, dxt, shape);
                    tpurt::activation_grad(dev, f, tensor(xt, x, shape), tensor(dyt, dy, shape),
                                           dx);
                    Tensor ref = Tensor::empty(dev, DType::Fp32, shape);
                    tpurt::activation_grad(dev, f, tensor(DType::Fp32, x, shape),
                                           tensor(DType::Fp32, dy, shape), ref);
                    require_rounded(dx, ref.to_vector<float>());
                    if (f == GradFunction::Gelu) // the card's sigmoid has no host model
                        continue;
                    std::vector<float> want(n);
                    for (std::size_t i = 0; i < n; ++i) {
                        if (f == GradFunction::Relu) {
                            want[i] = x[i] > 0 ? dy[i] : 0.0f;
                        } else if (f == GradFunction::Sigmoid) {
                            const float t = x[i] - x[i] * x[i];
                            want[i] = t * dy[i];
                        } else {
                            const float t = (x[i] * x[i]) * dy[i];
                            want[i] = dy[i] - t;
                        }
                    }
                    require_rounded(dx, want);
                }
}

TEST_CASE("softmax, log-softmax and cross-entropy of bf16 logits into bf16 or fp32 on the card") {
    tpurt::Device &dev = device();
    const std::size_t rows = 9, cols = 37;
    std::vector<float> x0 = tpurt::uniform_fp32(rows * cols, 23, -8.0f, 8.0f);
    const float specials[] = {-0.0f, 0.0f, 0x1p-140f, -0x1p-149f, 1.0f + 0x1p-8f};
    std::copy(std::begin(specials), std::end(specials), x0.begin());
    std::vector<float> t(rows * cols, 0.0f);
    for (std::size_t r = 0; r < rows; ++r)
        t[r * cols + (r * 5) % cols] = 1.0f;
    const Tensor tt = tensor(DType::Fp32, t, {rows, cols});
    const float scale = 1.0f / rows;
    for (DType xt : both)
        for (DType outt : both) {
            CAPTURE(tpurt::dtype_name(xt), tpurt::dtype_name(outt));
            const std::vector<float> x = representable(xt, x0);
            const Tensor in = tensor(xt, x, {rows, cols}),
                         in32 = tensor(DType::Fp32, x, {rows, cols});
            Tensor loss = Tensor::empty(dev, DType::Fp32, {rows}),
                   loss32 = Tensor::empty(dev, DType::Fp32, {rows});
            Tensor grad = Tensor::empty(dev, outt, {rows, cols}),
                   grad32 = Tensor::empty(dev, DType::Fp32, {rows, cols});
            tpurt::softmax_cross_entropy(dev, in, tt, loss, grad, scale);
            tpurt::softmax_cross_entropy(dev, in32, tt, loss32, grad32, scale);
            require_rounded(grad, grad32.to_vector<float>());
            REQUIRE(loss.to_vector<float>() == loss32.to_vector<float>());
            Tensor sm = Tensor::empty(dev, outt, {rows, cols}),
                   sm32 = Tensor::empty(dev, DType::Fp32, {rows, cols});
            tpurt::softmax(dev, in, sm);
            tpurt::softmax(dev, in32, sm32);
            require_rounded(sm, sm32.to_vector<float>());
            tpurt::log_softmax(dev, in, sm);
            tpurt::log_softmax(dev, in32, sm32);
            require_rounded(sm, sm32.to_vector<float>());
        }
}

TEST_CASE("max and average pooling gradients of every fp32 / bf16 combination on the card") {
    tpurt::Device &dev = device();
    const std::size_t n = 2, h = 6, w = 9, c = 5, k = 3, oh = h / k, ow = w / k;
    const std::size_t in = n * h * w * c, out = n * oh * ow * c;
    std::vector<float> x0(in);
    for (std::size_t i = 0; i < in; ++i) // small integers: ties within windows
        x0[i] = float(int((i * 2654435761u) >> 7) % 5 - 2);
    x0[0] = -0.0f;
    x0[3] = std::numeric_limits<float>::quiet_NaN();
    x0[5] = std::numeric_limits<float>::infinity();
    const std::vector<float> dy0 = with_specials(out, 24, -3.0f, 3.0f);
    const auto pixel = [&](std::size_t img, std::size_t yy, std::size_t xx) {
        return ((img * h + yy) * w + xx) * c;
    };
    for (DType xt : both)
        for (DType dyt : both)
            for (DType dxt : both) {
                CAPTURE(tpurt::dtype_name(xt), tpurt::dtype_name(dyt), tpurt::dtype_name(dxt));
                const std::vector<float> x = representable(xt, x0), dy = representable(dyt, dy0);
                const Tensor xs = tensor(xt, x, {n, h, w, c}),
                             dys = tensor(dyt, dy, {n, oh, ow, c});
                Tensor y = Tensor::empty(dev, xt, {n, oh, ow, c});
                tpurt::pool2d(dev, tpurt::PoolOp::Max, xs, y, k, k, k, k);
                const std::vector<float> yv = fp32_of(y);
                Tensor dx = Tensor::empty(dev, dxt, {n, h, w, c});
                tpurt::max_pool2d_grad(dev, xs, y, dys, dx, k);
                // The fp32 op on the widened operands, and the first maximum of each window
                // getting dy (1 x dy; 0 x dy elsewhere) on the host.
                Tensor ref = Tensor::empty(dev, DType::Fp32, {n, h, w, c});
                tpurt::max_pool2d_grad(dev, tensor(DType::Fp32, x, {n, h, w, c}),
                                       tensor(DType::Fp32, yv, {n, oh, ow, c}),
                                       tensor(DType::Fp32, dy, {n, oh, ow, c}), ref, k);
                require_rounded(dx, ref.to_vector<float>());
                std::vector<float> want(in), avg(in);
                for (std::size_t o = 0; o < out; ++o) {
                    const std::size_t ch = o % c, ox = (o / c) % ow, oy = (o / c / ow) % oh,
                                      img = o / c / ow / oh;
                    bool taken = false;
                    for (std::size_t a = 0; a < k; ++a)
                        for (std::size_t b = 0; b < k; ++b) {
                            const std::size_t at = pixel(img, oy * k + a, ox * k + b) + ch;
                            const bool hit = !taken && x[at] == yv[o];
                            taken = taken || hit;
                            want[at] = (hit ? 1.0f : 0.0f) * dy[o];
                            avg[at] = dy[o] / float(k * k);
                        }
                }
                require_rounded(dx, want);
                if (xt == DType::Bf16)
                    continue; // AVG reads no x: its combinations are dy's and dx's
                Tensor adx = Tensor::empty(dev, dxt, {n, h, w, c});
                tpurt::avg_pool2d_grad(dev, dys, adx, k);
                require_rounded(adx, avg);
            }
}

TEST_CASE("backward matmuls and column sums of bf16 operands at awkward shapes on the card") {
    tpurt::Device &dev = device();
    const auto bf16s = [](std::size_t count, unsigned seed) {
        std::vector<Bf16> v(count);
        const std::vector<float> f = tpurt::uniform_fp32(count, seed, -2.0f, 2.0f);
        for (std::size_t i = 0; i < count; ++i)
            v[i] = Bf16::from_float(f[i]);
        return v;
    };
    const auto bf16_tensor = [&](const std::vector<Bf16> &v, std::vector<std::size_t> shape) {
        return Tensor::from_host(dev, std::span<const Bf16>(v), std::move(shape));
    };
    const auto transposed = [](const std::vector<Bf16> &v, std::size_t rows, std::size_t cols) {
        std::vector<Bf16> t(v.size());
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = 0; c < cols; ++c)
                t[c * rows + r] = v[r * cols + c];
        return t;
    };
    // c[K, N] = a[M, K]^T b[M, N]: the inner dimension M = 300 spans three tiles of the array,
    // the last not a multiple of 32.
    {
        const std::uint32_t m = 300, k = 21, n = 33;
        const std::vector<Bf16> a = bf16s(m * k, 31), b = bf16s(m * n, 32);
        Tensor c = Tensor::empty(dev, DType::Fp32, {k, n});
        tpurt::matmul_tn(dev, bf16_tensor(a, {m, k}), bf16_tensor(b, {m, n}), c);
        std::vector<float> want(k * n);
        tpurt::reference_matmul(transposed(a, m, k), b, want, k, m, n);
        REQUIRE(c.to_vector<float>() == want);
    }
    // c[M, N] = a[M, K] b[N, K]^T with K = 200 (128 + 72) and N = 130 beyond the array's columns.
    {
        const std::uint32_t m = 45, k = 200, n = 130;
        const std::vector<Bf16> a = bf16s(m * k, 33), b = bf16s(n * k, 34);
        Tensor c = Tensor::empty(dev, DType::Fp32, {m, n});
        tpurt::matmul_nt(dev, bf16_tensor(a, {m, k}), bf16_tensor(b, {n, k}), c);
        std::vector<float> want(m * n);
        tpurt::reference_matmul(a, transposed(b, n, k), want, m, k, n);
        REQUIRE(c.to_vector<float>() == want);
    }
    // Column sums of bf16 a[M, N] into fp32: REDUCE SUM of the widened values, r ascending.
    {
        const std::size_t m = 137, n = 301;
        const std::vector<Bf16> a = bf16s(m * n, 35);
        Tensor sums = Tensor::empty(dev, DType::Fp32, {n});
        tpurt::column_sums(dev, bf16_tensor(a, {m, n}), sums);
        std::vector<float> want(n);
        for (std::size_t j = 0; j < n; ++j) {
            float s = a[j].to_float();
            for (std::size_t r = 1; r < m; ++r)
                s += a[r * n + j].to_float();
            want[j] = s;
        }
        REQUIRE(sums.to_vector<float>() == want);
    }
}

TEST_CASE("conv2d input and weight gradients of bf16 operands at awkward shapes on the card") {
    tpurt::Device &dev = device();
    struct Case {
        std::size_t n, h, w, c, f, k, pad;
    };
    // The gradients' convolutions reduce over F (input gradient) and the batch N (weight
    // gradient): 40 filters (a block of 32 and 8) with 37 channels and padding; 35 images (32
    // and 3) with 133 filters (a K of 128 + 5 and more filters than the array's columns); a 1 x 1
    // image.
    for (const Case s :
         {Case{2, 6, 5, 37, 40, 3, 1}, Case{35, 3, 4, 3, 133, 2, 0}, Case{1, 1, 1, 2, 3, 1, 0}}) {
        CAPTURE(s.n, s.h, s.w, s.c, s.f, s.k, s.pad);
        const std::size_t oh = s.h + 2 * s.pad - s.k + 1, ow = s.w + 2 * s.pad - s.k + 1;
        const tpurt::Conv2dParams params{.pad_h = std::uint32_t(s.pad),
                                         .pad_w = std::uint32_t(s.pad)};
        for (const bool integers : {true, false}) {
            CAPTURE(integers);
            std::mt19937 rng(unsigned(s.c * 7 + s.f));
            const auto values = [&](std::size_t count) {
                std::vector<float> v(count);
                std::uniform_real_distribution<float> u(-2.0f, 2.0f);
                for (float &x : v)
                    x = integers ? float(int(rng() % 7) - 3) : Bf16::from_float(u(rng)).to_float();
                return v;
            };
            const std::vector<float> x = values(s.n * s.h * s.w * s.c),
                                     wt = values(s.k * s.k * s.c * s.f),
                                     dy = values(s.n * oh * ow * s.f);
            const Tensor xt = tensor(DType::Bf16, x, {s.n, s.h, s.w, s.c}),
                         wtt = tensor(DType::Bf16, wt, {s.k, s.k, s.c, s.f}),
                         dyt = tensor(DType::Bf16, dy, {s.n, oh, ow, s.f});
            Tensor dx = Tensor::empty(dev, DType::Fp32, {s.n, s.h, s.w, s.c});
            Tensor dw = Tensor::empty(dev, DType::Fp32, {s.k, s.k, s.c, s.f});
            tpurt::conv2d_input_grad(dev, dyt, wtt, dx, params);
            tpurt::conv2d_weight_grad(dev, xt, dyt, dw, params);
            std::vector<float> want_dx(x.size(), 0.0f), want_dw(wt.size(), 0.0f);
            if (integers) { // every product of the forward convolution scattered: exact
                for (std::size_t i = 0; i < s.n; ++i)
                    for (std::size_t oy = 0; oy < oh; ++oy)
                        for (std::size_t ox = 0; ox < ow; ++ox)
                            for (std::size_t a = 0; a < s.k; ++a)
                                for (std::size_t b = 0; b < s.k; ++b) {
                                    const long iy = long(oy + a) - long(s.pad),
                                               ix = long(ox + b) - long(s.pad);
                                    if (iy < 0 || ix < 0 || iy >= long(s.h) || ix >= long(s.w))
                                        continue;
                                    for (std::size_t ch = 0; ch < s.c; ++ch)
                                        for (std::size_t fo = 0; fo < s.f; ++fo) {
                                            const float g =
                                                dy[((i * oh + oy) * ow + ox) * s.f + fo];
                                            const std::size_t xi =
                                                ((i * s.h + iy) * s.w + ix) * s.c + ch;
                                            const std::size_t wi =
                                                ((a * s.k + b) * s.c + ch) * s.f + fo;
                                            want_dx[xi] += g * wt[wi];
                                            want_dw[wi] += g * x[xi];
                                        }
                                }
            } else { // the golden bf16 convolutions the gradients are (train_ops.hpp)
                const auto bf = [](const std::vector<float> &v) {
                    std::vector<Bf16> b(v.size());
                    for (std::size_t i = 0; i < v.size(); ++i)
                        b[i] = Bf16::from_float(v[i]);
                    return b;
                };
                // dx = conv(dy, w flipped in space and transposed in channels, pad k - 1 - pad).
                std::vector<float> flipped(wt.size());
                for (std::size_t a = 0; a < s.k; ++a)
                    for (std::size_t b = 0; b < s.k; ++b)
                        for (std::size_t ch = 0; ch < s.c; ++ch)
                            for (std::size_t fo = 0; fo < s.f; ++fo)
                                flipped[(((s.k - 1 - a) * s.k + (s.k - 1 - b)) * s.f + fo) * s.c +
                                        ch] = wt[((a * s.k + b) * s.c + ch) * s.f + fo];
                tpurt::reference_conv2d(bf(dy), bf(flipped), want_dx,
                                        {.batch = std::uint32_t(s.n),
                                         .height = std::uint32_t(oh),
                                         .width = std::uint32_t(ow),
                                         .channels = std::uint32_t(s.f),
                                         .kernel_h = std::uint32_t(s.k),
                                         .kernel_w = std::uint32_t(s.k),
                                         .filters = std::uint32_t(s.c),
                                         .pad_h = std::uint32_t(s.k - 1 - s.pad),
                                         .pad_w = std::uint32_t(s.k - 1 - s.pad)});
                // dw: x as [C, H, W, N] convolved with dy as the [OH, OW, N, F] kernel, then
                // [C, KH, KW, F] permuted to [KH, KW, C, F].
                std::vector<float> xc(x.size()), dyk(dy.size());
                for (std::size_t i = 0; i < s.n; ++i)
                    for (std::size_t yy = 0; yy < s.h; ++yy)
                        for (std::size_t xx = 0; xx < s.w; ++xx)
                            for (std::size_t ch = 0; ch < s.c; ++ch)
                                xc[((ch * s.h + yy) * s.w + xx) * s.n + i] =
                                    x[((i * s.h + yy) * s.w + xx) * s.c + ch];
                for (std::size_t i = 0; i < s.n; ++i)
                    for (std::size_t oy = 0; oy < oh; ++oy)
                        for (std::size_t ox = 0; ox < ow; ++ox)
                            for (std::size_t fo = 0; fo < s.f; ++fo)
                                dyk[((oy * ow + ox) * s.n + i) * s.f + fo] =
                                    dy[((i * oh + oy) * ow + ox) * s.f + fo];
                std::vector<float> g(wt.size());
                tpurt::reference_conv2d(bf(xc), bf(dyk), g,
                                        {.batch = std::uint32_t(s.c),
                                         .height = std::uint32_t(s.h),
                                         .width = std::uint32_t(s.w),
                                         .channels = std::uint32_t(s.n),
                                         .kernel_h = std::uint32_t(oh),
                                         .kernel_w = std::uint32_t(ow),
                                         .filters = std::uint32_t(s.f),
                                         .pad_h = std::uint32_t(s.pad),
                                         .pad_w = std::uint32_t(s.pad)});
                for (std::size_t ch = 0; ch < s.c; ++ch)
                    for (std::size_t a = 0; a < s.k; ++a)
                        for (std::size_t b = 0; b < s.k; ++b)
                            for (std::size_t fo = 0; fo < s.f; ++fo)
                                want_dw[((a * s.k + b) * s.c + ch) * s.f + fo] =
                                    g[((ch * s.k + a) * s.k + b) * s.f + fo];
            }
            REQUIRE(dx.to_vector<float>() == want_dx);
            REQUIRE(dw.to_vector<float>() == want_dw);
        }
    }
}

TEST_CASE("training ops name the op and the dtypes they refuse") {
    tpurt::Device &dev = device();
    const Tensor f32 = Tensor::empty(dev, DType::Fp32, {2, 4, 4, 3});
    const Tensor b16 = Tensor::empty(dev, DType::Bf16, {2, 4, 4, 3});
    const Tensor i8 = Tensor::empty(dev, DType::Int8, {2, 4, 4, 3});
    Tensor out = Tensor::empty(dev, DType::Fp32, {2, 4, 4, 3});
    const Tensor y32 = Tensor::empty(dev, DType::Fp32, {2, 2, 2, 3});
    require_refused([&] { tpurt::activation_grad(dev, GradFunction::Tanh, f32, i8, out); },
                    "tanh_grad: dy");
    require_refused([&] { tpurt::activation_grad(dev, GradFunction::Tanh, f32, i8, out); },
                    "is int8: it must be a densely packed fp32 or bf16 tensor");
    require_refused([&] { tpurt::max_pool2d_grad(dev, b16, y32, y32, out, 2); },
                    "max_pool2d_grad: x is bf16 and y fp32: x and y must have one dtype");
    Tensor loss = Tensor::empty(dev, DType::Fp32, {2 * 4 * 4});
    Tensor grad8 = Tensor::empty(dev, DType::Int8, {2, 4, 4, 3});
    require_refused([&] { tpurt::softmax_cross_entropy(dev, f32, f32, loss, grad8, 1.0f); },
                    "softmax_cross_entropy: grad");
    require_refused([&] { tpurt::softmax_cross_entropy(dev, f32, b16, loss, out, 1.0f); },
                    "must be a densely packed fp32 tensor");
}
