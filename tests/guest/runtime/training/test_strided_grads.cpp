// SPDX-License-Identifier: MIT
// test_strided_grads.cpp - guest test: the convolution gradients with strides, padding and
// dilation and the pooling gradients with overlapping windows, gaps and rows no window reaches,
// on the real card through their blocking and stream forms: bit for bit against the CPU
// references (reference_conv2d_input_grad / _weight_grad of conv_grad_compiler.hpp,
// reference_pool_grad of train_compiler.hpp) in fp32 and bf16, and against central differences
// of the card's own forward pass (conv2d / grouped_conv2d, pool2d) on values whose sums are
// exact (grouped ones too); refusals that say what to do.
#include <tpurt/codegen/conv_grad_compiler.hpp>
#include <tpurt/codegen/train_compiler.hpp>
#include <tpurt/golden/reference_conv_grad.hpp>
#include <tpurt/golden/reference_pool_grad.hpp>
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/tpurt.hpp>

#include "runtime_helpers.hpp"

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

namespace {

using tpurt::Bf16;
using tpurt::DType;
using tpurt::Tensor;

using guest_test::device;
using guest_test::require_refused;
using tpurt::small_ints;

const DType both[] = {DType::Fp32, DType::Bf16};

Tensor tensor(DType type, const std::vector<float> &v, std::vector<std::size_t> shape) {
    Tensor t = Tensor::empty(device(), type, std::move(shape));
    if (type == DType::Fp32) {
        t.copy_from_host(v);
    } else {
        std::vector<Bf16> b(v.size());
        for (std::size_t i = 0; i < v.size(); ++i)
            b[i] = Bf16::from_float(v[i]);
        t.copy_from_host(b);
    }
    return t;
}

// v as `type` holds it (bf16: rounded).
std::vector<float> representable(DType type, std::vector<float> v) {
    if (type == DType::Bf16)
        for (float &x : v)
            x = Bf16::from_float(x).to_float();
    return v;
}

// An fp32 or bf16 tensor's values as floats.
std::vector<float> values_of(const Tensor &t) {
    if (t.dtype() == DType::Fp32)
        return t.to_vector<float>();
    std::vector<float> v;
    for (Bf16 b : t.to_vector<Bf16>())
        v.push_back(b.to_float());
    return v;
}

std::vector<std::byte> bytes_of(const Tensor &t) {
    std::vector<std::byte> b(t.layout().data_bytes());
    t.copy_to_host(b.data(), b.size());
    return b;
}

std::vector<std::uint32_t> bits_of(const std::vector<float> &v) {
    std::vector<std::uint32_t> out(v.size());
    for (std::size_t i = 0; i < v.size(); ++i)
        out[i] = std::bit_cast<std::uint32_t>(v[i]);
    return out;
}

std::vector<float> floats_of(const std::vector<std::byte> &b) {
    std::vector<float> v(b.size() / 4);
    std::memcpy(v.data(), b.data(), b.size());
    return v;
}

struct ConvCase {
    std::size_t n, h, w, c, kh, kw, f;
    tpurt::Conv2dParams params;
    tpurt::ConvDilation dilation;
};

} // namespace

TEST_CASE("conv2d gradients with strides, padding and dilation on the card") {
    tpurt::Device &dev = device();
    const ConvCase k = GENERATE(ConvCase{2, 9, 8, 3, 3, 3, 5, {2, 2, 1, 1}, {1, 1}},
                                ConvCase{1, 10, 11, 5, 3, 2, 7, {3, 3, 0, 1}, {1, 1}},
                                ConvCase{2, 8, 7, 3, 3, 3, 4, {1, 1, 2, 2}, {2, 2}},
                                ConvCase{1, 11, 9, 6, 2, 3, 9, {2, 3, 1, 0}, {2, 1}});
    const std::size_t khd = (k.kh - 1) * k.dilation.h + 1, kwd = (k.kw - 1) * k.dilation.w + 1;
    const std::size_t oh = (k.h + 2 * k.params.pad_h - khd) / k.params.stride_h + 1,
                      ow = (k.w + 2 * k.params.pad_w - kwd) / k.params.stride_w + 1;
    const std::vector<std::size_t> xs{k.n, k.h, k.w, k.c}, ws{k.kh, k.kw, k.c, k.f},
        ys{k.n, oh, ow, k.f};
    const auto x = small_ints(k.n * k.h * k.w * k.c, 21, 3),
               wv = small_ints(k.kh * k.kw * k.c * k.f, 22, 3),
               r = small_ints(k.n * oh * ow * k.f, 23, 3);
    const tpurt::ConvGrouping grouping{.dilation_h = k.dilation.h, .dilation_w = k.dilation.w};
    for (DType type : both) {
        CAPTURE(k.h, k.w, k.params.stride_h, k.params.stride_w, k.dilation.h, k.dilation.w,
                tpurt::dtype_name(type));
        const Tensor xt = tensor(type, x, xs), wt = tensor(type, wv, ws), dy = tensor(type, r, ys);
        Tensor dx = Tensor::empty(dev, DType::Fp32, xs), dw = Tensor::empty(dev, DType::Fp32, ws);
        tpurt::conv2d_input_grad(dev, dy, wt, dx, k.params, k.dilation);
        tpurt::conv2d_weight_grad(dev, xt, dy, dw, k.params, k.dilation);
        const tpurt::ConvGradProblem p{.type = type,
                                       .shape = {.batch = std::uint32_t(k.n),
                                                 .height = std::uint32_t(k.h),
                                                 .width = std::uint32_t(k.w),
                                                 .channels = std::uint32_t(k.c),
                                                 .kernel_h = std::uint32_t(k.kh),
                                                 .kernel_w = std::uint32_t(k.kw),
                                                 .filters = std::uint32_t(k.f),
                                                 .stride_h = k.params.stride_h,
                                                 .stride_w = k.params.stride_w,
                                                 .pad_h = k.params.pad_h,
                                                 .pad_w = k.params.pad_w},
                                       .dilation_h = k.dilation.h,
                                       .dilation_w = k.dilation.w};
        const std::vector<float> gx = dx.to_vector<float>(), gw = dw.to_vector<float>();
        REQUIRE(bits_of(gx) == bits_of(floats_of(tpurt::reference_conv2d_input_grad(
                                   p, bytes_of(dy), bytes_of(wt)))));
        REQUIRE(bits_of(gw) == bits_of(floats_of(tpurt::reference_conv2d_weight_grad(
                                   p, bytes_of(xt), bytes_of(dy)))));
        // The stream forms give the same.
        tpurt::Stream stream(dev);
        Tensor dx2 = Tensor::empty(dev, DType::Fp32, xs), dw2 = Tensor::empty(dev, DType::Fp32, ws);
        tpurt::conv2d_input_grad(stream, dy, wt, dx2, k.params, k.dilation);
        tpurt::conv2d_weight_grad(stream, xt, dy, dw2, k.params, k.dilation);
        stream.synchronize();
        REQUIRE(bits_of(dx2.to_vector<float>()) == bits_of(gx));
        REQUIRE(bits_of(dw2.to_vector<float>()) == bits_of(gw));
        if (type != DType::Fp32)
            continue;
        // L = sum(y r) with y the card's forward pass; linear in each operand and every value a
        // small integer, so central differences with steps of 1 are exact.
        const auto loss = [&](const std::vector<float> &xv, const std::vector<float> &wvv) {
            Tensor y = Tensor::empty(dev, DType::Fp32, ys);
            tpurt::grouped_conv2d(dev, tensor(type, xv, xs), tensor(type, wvv, ws), y, grouping,
                                  k.params);
            const std::vector<float> yv = y.to_vector<float>();
            double l = 0;
            for (std::size_t i = 0; i < yv.size(); ++i)
                l += double(yv[i]) * r[i];
            return l;
        };
        for (std::size_t i : {std::size_t{0}, x.size() / 3, x.size() / 2 + 1, x.size() - 1}) {
            std::vector<float> up = x, down = x;
            up[i] += 1;
            down[i] -= 1;
            CAPTURE(i);
            REQUIRE((loss(up, wv) - loss(down, wv)) / 2 == gx[i]);
        }
        for (std::size_t i : {std::size_t{0}, wv.size() / 2, wv.size() - 1}) {
            std::vector<float> up = wv, down = wv;
            up[i] += 1;
            down[i] -= 1;
            CAPTURE(i);
            REQUIRE((loss(x, up) - loss(x, down)) / 2 == gw[i]);
        }
    }
}

TEST_CASE("grouped conv2d gradients with strides and dilation against central differences") {
    tpurt::Device &dev = device();
    const std::size_t n = 2, h = 9, w = 8, c = 4, f = 6, k = 3;
    const tpurt::ConvGrouping grouping{.groups = 2, .dilation_h = 2, .dilation_w = 1};
    const tpurt::Conv2dParams params{.stride_h = 2, .stride_w = 3, .pad_h = 2, .pad_w = 1};
    const std::size_t oh = (h + 4 - 5) / 2 + 1, ow = (w + 2 - 3) / 3 + 1;
    const std::vector<std::size_t> xs{n, h, w, c}, ws{k, k, c / 2, f}, ys{n, oh, ow, f};
    const auto x = small_ints(n * h * w * c, 41, 3), wv = small_ints(k * k * (c / 2) * f, 42, 3),
               r = small_ints(n * oh * ow * f, 43, 3);
    const auto loss = [&](const std::vector<float> &xv, const std::vector<float> &wvv) {
        Tensor y = Tensor::empty(dev, DType::Fp32, ys);
        tpurt::grouped_conv2d(dev, tensor(DType::Fp32, xv, xs), tensor(DType::Fp32, wvv, ws), y,
                              grouping, params);
        const std::vector<float> yv = y.to_vector<float>();
        double l = 0;
        for (std::size_t i = 0; i < yv.size(); ++i)
            l += double(yv[i]) * r[i];
        return l;
    };
    Tensor dx = Tensor::empty(dev, DType::Fp32, xs), dw = Tensor::empty(dev, DType::Fp32, ws);
    const Tensor dy = tensor(DType::Fp32, r, ys);
    tpurt::grouped_conv2d_input_grad(dev, dy, tensor(DType::Fp32, wv, ws), dx, grouping, params);
    tpurt::grouped_conv2d_weight_grad(dev, tensor(DType::Fp32, x, xs), dy, dw, grouping, params);
    const std::vector<float> gx = dx.to_vector<float>(), gw = dw.to_vector<float>();
    // Linear in each operand, small integers: central differences with steps of 1 are exact.
    for (std::size_t i : {std::size_t{0}, std::size_t{37}, std::size_t{290}, x.size() - 1}) {
        std::vector<float> up = x, down = x;
        up[i] += 1;
        down[i] -= 1;
        CAPTURE(i);
        REQUIRE((loss(up, wv) - loss(down, wv)) / 2 == gx[i]);
    }
    for (std::size_t i : {std::size_t{0}, std::size_t{17}, wv.size() - 1}) {
        std::vector<float> up = wv, down = wv;
        up[i] += 1;
        down[i] -= 1;
        CAPTURE(i);
        REQUIRE((loss(x, up) - loss(x, down)) / 2 == gw[i]);
    }
}

TEST_CASE("conv2d gradients refuse shapes that do not match the stride, saying what to do") {
    tpurt::Device &dev = device();
    const Tensor w = Tensor::empty(dev, DType::Fp32, {3, 3, 2, 4});
    Tensor dx = Tensor::empty(dev, DType::Fp32, {1, 9, 9, 2});
    require_refused(
        [&] {
            tpurt::conv2d_input_grad(dev, Tensor::empty(dev, DType::Fp32, {1, 5, 4, 4}), w, dx,
                                     {.stride_h = 2, .stride_w = 2, .pad_h = 1, .pad_w = 1});
        },
        "must be the forward output [1, 5, 5, 4]");
    require_refused(
        [&] {
            Tensor dw = Tensor::empty(dev, DType::Fp32, {3, 3, 2, 4});
            tpurt::conv2d_weight_grad(dev, Tensor::empty(dev, DType::Fp32, {1, 9, 9, 2}),
                                      Tensor::empty(dev, DType::Fp32, {1, 13, 7, 4}), dw,
                                      {.pad_h = 3});
        },
        "padding of 3 x 0 must be below the dilated kernel of 3 x 3 taps");
}

TEST_CASE("pooling gradients with overlapping windows, gaps and remainders on the card") {
    tpurt::Device &dev = device();
    struct Shape {
        std::uint32_t n, h, w, c, kh, kw, sh, sw;
    };
    const Shape s = GENERATE(Shape{2, 7, 9, 5, 3, 3, 2, 2}, Shape{1, 5, 6, 3, 2, 2, 1, 1},
                             Shape{2, 8, 11, 3, 3, 3, 3, 3}, Shape{1, 9, 7, 4, 2, 3, 3, 2});
    const std::size_t oh = (s.h - s.kh) / s.sh + 1, ow = (s.w - s.kw) / s.sw + 1;
    const std::vector<std::size_t> xs{s.n, s.h, s.w, s.c}, ys{s.n, oh, ow, s.c};
    // Distinct integers (steps of 1/2 keep every window's maximum where it is; bf16 rounds the
    // larger ones, making ties) and small integer gradients.
    std::vector<float> x(s.n * s.h * s.w * s.c);
    for (std::size_t i = 0; i < x.size(); ++i)
        x[i] = float((i * 37) % x.size()) - float(x.size() / 2);
    const std::vector<float> r = small_ints(s.n * oh * ow * s.c, 31, 3);
    for (tpurt::PoolOp op : {tpurt::PoolOp::Max, tpurt::PoolOp::Avg})
        for (DType type : both) {
            CAPTURE(s.h, s.w, s.kh, s.kw, s.sh, s.sw, op == tpurt::PoolOp::Max,
                    tpurt::dtype_name(type));
            const Tensor xt = tensor(type, x, xs), dy = tensor(type, r, ys);
            Tensor y = Tensor::empty(dev, type, ys), dx = Tensor::empty(dev, DType::Fp32, xs);
            tpurt::pool2d(dev, op, xt, y, s.kh, s.kw, s.sh, s.sw);
            if (op == tpurt::PoolOp::Max)
                tpurt::max_pool2d_grad(dev, xt, y, dy, dx, s.kh, s.kw, s.sh, s.sw);
            else
                tpurt::avg_pool2d_grad(dev, dy, dx, s.kh, s.kw, s.sh, s.sw);
            const tpurt::PoolGradProblem p{.op = op,
                                           .batch = s.n,
                                           .height = s.h,
                                           .width = s.w,
                                           .channels = s.c,
                                           .window_h = s.kh,
                                           .window_w = s.kw,
                                           .stride_h = s.sh,
                                           .stride_w = s.sw};
            const std::vector<float> want =
                tpurt::reference_pool_grad(p, representable(type, x), values_of(y), r);
            const std::vector<float> got = dx.to_vector<float>();
            REQUIRE(bits_of(got) == bits_of(want));
            // A bf16 dx through the stream form: the fp32 result rounded.
            tpurt::Stream stream(dev);
            Tensor dxb = Tensor::empty(dev, DType::Bf16, xs);
            if (op == tpurt::PoolOp::Max)
                tpurt::max_pool2d_grad(stream, xt, y, dy, dxb, s.kh, s.kw, s.sh, s.sw);
            else
                tpurt::avg_pool2d_grad(stream, dy, dxb, s.kh, s.kw, s.sh, s.sw);
            stream.synchronize();
            const std::vector<Bf16> rounded = dxb.to_vector<Bf16>();
            for (std::size_t i = 0; i < got.size(); ++i) {
                CAPTURE(i);
                REQUIRE(rounded[i] == Bf16::from_float(got[i]));
            }
            if (type != DType::Fp32)
                continue;
            // Central differences of sum(r pool2d(x)) on the card, steps of 1/2 (MAX: exact;
            // AVG: the rounding of window sums below 3000 divided by the window, 2e-3).
            const auto loss = [&](const std::vector<float> &xv) {
                Tensor yv = Tensor::empty(dev, DType::Fp32, ys);
                tpurt::pool2d(dev, op, tensor(type, xv, xs), yv, s.kh, s.kw, s.sh, s.sw);
                const std::vector<float> v = yv.to_vector<float>();
                double l = 0;
                for (std::size_t i = 0; i < v.size(); ++i)
                    l += double(v[i]) * r[i];
                return l;
            };
            for (std::size_t i : {std::size_t{1}, x.size() / 3, x.size() / 2 + 1, x.size() - 2}) {
                std::vector<float> up = x, down = x;
                up[i] += 0.5f;
                down[i] -= 0.5f;
                CAPTURE(i);
                REQUIRE(std::fabs(loss(up) - loss(down) - got[i]) <=
                        (op == tpurt::PoolOp::Max ? 0.0 : 2e-3));
            }
        }
}

TEST_CASE("pooling gradients refuse shapes that are not the forward pool's, saying what to do") {
    tpurt::Device &dev = device();
    const Tensor x = Tensor::empty(dev, DType::Fp32, {1, 7, 7, 3});
    Tensor dx = Tensor::empty(dev, DType::Fp32, {1, 7, 7, 3});
    const Tensor y = Tensor::empty(dev, DType::Fp32, {1, 3, 3, 3});
    require_refused([&] { tpurt::max_pool2d_grad(dev, x, y, y, dx, 3, 3, 1, 1); },
                    "must be [N, (H - 3) / 1 + 1, (W - 3) / 1 + 1, C] = [1, 5, 5, 3]");
    require_refused([&] { tpurt::avg_pool2d_grad(dev, y, dx, 3, 3, 0, 2); },
                    "avg_pool2d_grad: windows of 3 x 3 at strides 0 x 2: windows and strides "
                    "must be at least 1");
    require_refused([&] { tpurt::avg_pool2d_grad(dev, y, dx, 8, 8, 1, 1); },
                    "is smaller than one window");
}
