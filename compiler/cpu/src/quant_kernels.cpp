// SPDX-License-Identifier: MIT
// quant_kernels.cpp - the reference kernels of ONNX's quantised ops (tpumodel/quantization.hpp
// for the arithmetic the card shares): QuantizeLinear, DequantizeLinear (per tensor or per
// axis), MatMulInteger and QLinearMatMul (A [..., M, K] by B [K, N] or of A's batch, B's zero
// point and scale per tensor or per column), ConvInteger and QLinearConv (2-D, NCHW x OIHW,
// group 1, the weights' zero point and scale per tensor or per filter, QLinearConv's int32
// bias), and DynamicQuantizeLinear. Integer sums exact, wrapped to int32 as ONNX's int32
// outputs are; requantisation as float(acc) x multiplier in binary32, rounded half to even.
#include "kernel_support.hpp"
#include "tpumodel/quantization.hpp"

#include <algorithm>
#include <cmath>

namespace tpumodel::cpu {

namespace {

using Inputs = std::span<const Tensor *const>;
using Outputs = std::span<Tensor *const>;

const Tensor *optional_input(Inputs in, std::size_t i) {
    return i < in.size() ? in[i] : nullptr;
}

void require_float(const Node &node, const Tensor &t, const char *what) {
    if (t.dtype != DType::Float && t.dtype != DType::Bfloat16)
        throw KernelError(node, std::string("its ") + what + " is " + dtype_name(t.dtype) +
                                    ", not float32 or bfloat16");
}

bool eight_bit(DType t) {
    return t == DType::Uint8 || t == DType::Int8;
}

void require_eight_bit(const Node &node, const Tensor &t, const char *what) {
    if (!eight_bit(t.dtype))
        throw KernelError(node, std::string("its ") + what + " is " + dtype_name(t.dtype) +
                                    ", not uint8 or int8");
}

// The per-tensor or per-axis channels of parameter `p` (and of zero point `zp`, which must
// match it) for `x`.
Channels parameter_channels(const Node &node, const Tensor &x, const Tensor &p, const Tensor *zp,
                            std::int64_t axis) {
    if (zp && zp->element_count() != p.element_count())
        throw KernelError(node, "its zero point " + zp->shape_string() + " and scale " +
                                    p.shape_string() + " differ in size");
    const std::optional<Channels> c = channels(x.shape, axis, p.element_count());
    if (!c)
        throw KernelError(node, "a scale of " + p.shape_string() +
                                    " is neither one value nor one " + "per position along axis " +
                                    std::to_string(axis) + " of " + x.shape_string());
    return *c;
}

// The quantised value of q, zp added and saturated to `t`'s range.
std::int64_t saturate(std::int32_t q, std::int64_t zp, DType t) {
    const IntRange r = int_range(t);
    return std::clamp(std::int64_t(q) + zp, r.lo, r.hi);
}

void quantize_linear(const Node &node, Inputs in, Outputs out) {
    const Tensor &x = input(node, in, 0), &scale = input(node, in, 1);
    const Tensor *zp = optional_input(in, 2);
    require_float(node, x, "input");
    require_float(node, scale, "scale");
    if (zp)
        require_eight_bit(node, *zp, "zero point");
    const Channels c = parameter_channels(node, x, scale, zp, node.get_int("axis", 1));
    if (c.count > 1)
        require_plain(node, x);
    Tensor &y = *out[0];
    shape_output(y, zp ? zp->dtype : DType::Uint8, x.shape);
    y.layout = x.layout;
    for (std::uint64_t i = 0; i < x.element_count(); ++i) {
        const float q = float(real_at(x, i)) / float(real_at(scale, c.of(i)));
        const std::int64_t v = saturate(to_int32(q), zero_point(zp, c.of(i)), y.dtype);
        store(y, i, 0, v);
    }
}

void dequantize_linear(const Node &node, Inputs in, Outputs out) {
    const Tensor &x = input(node, in, 0), &scale = input(node, in, 1);
    const Tensor *zp = optional_input(in, 2);
    if (!eight_bit(x.dtype) && x.dtype != DType::Int32)
        throw KernelError(node, std::string("its input is ") + dtype_name(x.dtype) +
                                    ", not uint8, int8 or int32");
    require_float(node, scale, "scale");
    if (zp && zp->dtype != x.dtype)
        throw KernelError(node, "its zero point is not of its input's dtype");
    const Channels c = parameter_channels(node, x, scale, zp, node.get_int("axis", 1));
    if (c.count > 1)
        require_plain(node, x);
    Tensor &y = *out[0];
    shape_output(y, DType::Float, x.shape);
    y.layout = x.layout;
    for (std::uint64_t i = 0; i < x.element_count(); ++i) {
        const float d = float(int_at(x, i)) - float(zero_point(zp, c.of(i)));
        store(y, i, d * float(real_at(scale, c.of(i))), 0);
    }
}

// A zero point or scale of one value, or (`per` > 1) of one or `per` values.
void require_count(const Node &node, const Tensor *t, std::uint64_t per, const char *what) {
    if (t && t->element_count() != 1 && t->element_count() != per)
        throw KernelError(node, std::string("its ") + what + " " + t->shape_string() +
                                    " is neither one value nor " + std::to_string(per));
}

// Sum over k of (a - za)(b - zb[n]) for A [..., M, K] and B [K, N] or [..., K, N] (A's batch
// axes), exactly; its shape is [..., M, N].
struct Product {
    std::vector<std::int64_t> shape;
    std::vector<std::int64_t> acc;
};

Product integer_matmul(const Node &node, const Tensor &a, const Tensor *za, const Tensor &b,
                       const Tensor *zb) {
    require_eight_bit(node, a, "A");
    require_eight_bit(node, b, "B");
    require_plain(node, a);
    require_plain(node, b);
    if (a.shape.size() < 2 || b.shape.size() < 2)
        throw KernelError(node, "A and B must be matrices or batches of them");
    const std::int64_t m = a.shape[a.shape.size() - 2], k = a.shape.back(), n = b.shape.back();
    const bool batched_b = b.shape.size() > 2;
    if (b.shape[b.shape.size() - 2] != k ||
        (batched_b &&
         !std::equal(a.shape.begin(), a.shape.end() - 2, b.shape.begin(), b.shape.end() - 2)) ||
        (batched_b && a.shape.size() != b.shape.size()))
        throw KernelError(node, "A " + a.shape_string() + " and B " + b.shape_string() +
                                    " do not chain (B is [K, N] or has A's batch axes)");
    require_count(node, za, 1, "A's zero point (per row is not supported)");
    require_count(node, zb, std::uint64_t(n), "B's zero point");
    std::int64_t batch = 1;
    for (std::size_t i = 0; i + 2 < a.shape.size(); ++i)
        batch *= a.shape[i];
    Product p{a.shape, std::vector<std::int64_t>(std::size_t(batch * m * n))};
    p.shape.back() = n;
    const std::int64_t a_zero = zero_point(za, 0);
    for (std::int64_t s = 0; s < batch; ++s)
        for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = 0; j < n; ++j) {
                std::int64_t sum = 0;
                for (std::int64_t t = 0; t < k; ++t) {
                    const std::int64_t av = int_at(a, std::uint64_t((s * m + i) * k + t));
                    const std::int64_t bv =
                        int_at(b, std::uint64_t(((batched_b ? s : 0) * k + t) * n + j));
                    sum += (av - a_zero) * (bv - zero_point(zb, std::uint64_t(j)));
                }
                p.acc[std::size_t((s * m + i) * n + j)] = sum;
            }
    return p;
}

void matmul_integer(const Node &node, Inputs in, Outputs out) {
    const Product p = integer_matmul(node, input(node, in, 0), optional_input(in, 2),
                                     input(node, in, 1), optional_input(in, 3));
    shape_output(*out[0], DType::Int32, p.shape);
    for (std::size_t i = 0; i < p.acc.size(); ++i)
        store(*out[0], i, 0, std::int32_t(std::uint32_t(p.acc[i])));
}

// acc (wrapped to int32) x multiplier, rounded and saturated to zy's dtype: the requantisation.
std::int64_t requantize(std::int64_t acc, float m, const Tensor *zy, DType t) {
    const float v = float(std::int32_t(std::uint32_t(acc))) * m;
    return saturate(to_int32(v), zero_point(zy, 0), t);
}

// The output dtype of a QLinear op: its y_zero_point's.
DType qlinear_output(const Node &node, const Tensor &zy) {
    require_eight_bit(node, zy, "output zero point");
    require_count(node, &zy, 1, "output zero point");
    return zy.dtype;
}

void qlinear_matmul(const Node &node, Inputs in, Outputs out) {
    const Tensor &sa = input(node, in, 1), &sb = input(node, in, 4), &sy = input(node, in, 6);
    const Tensor &zy = input(node, in, 7);
    for (const Tensor *s : {&sa, &sb, &sy})
        require_float(node, *s, "scale");
    const Product p = integer_matmul(node, input(node, in, 0), &input(node, in, 2),
                                     input(node, in, 3), &input(node, in, 5));
    const std::uint64_t n = std::uint64_t(p.shape.back());
    require_count(node, &sa, 1, "A's scale");
    require_count(node, &sb, n, "B's scale");
    require_count(node, &sy, 1, "output scale");
    const DType t = qlinear_output(node, zy);
    shape_output(*out[0], t, p.shape);
    for (std::size_t i = 0; i < p.acc.size(); ++i) {
        const float m = multiplier(float(real_at(sa, 0)),
                                   float(real_at(sb, sb.element_count() == 1 ? 0 : i % n)),
                                   float(real_at(sy, 0)));
        store(*out[0], i, 0, requantize(p.acc[i], m, &zy, t));
    }
}

// Sum over the window of (x - zx)(w - zw[f]) of a 2-D convolution of x [N, C, H, W] by w
// [F, C, KH, KW] (group 1), exactly; its shape is [N, F, OH, OW].
Product integer_conv(const Node &node, const Tensor &x, const Tensor *zx, const Tensor &w,
                     const Tensor *zw) {
    require_eight_bit(node, x, "input");
    require_eight_bit(node, w, "weights");
    require_plain(node, x);
    require_plain(node, w);
    if (x.shape.size() != 4 || w.shape.size() != 4 || w.shape[1] != x.shape[1])
        throw KernelError(node, "the CPU kernel runs 2-D convolutions of NCHW x OIHW only, not " +
                                    x.shape_string() + " by " + w.shape_string());
    if (node.get_int("group", 1) != 1)
        throw KernelError(node, "group " + std::to_string(node.get_int("group", 1)) +
                                    " is not supported");
    const std::int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], wd = x.shape[3];
    const std::int64_t f = w.shape[0], kh = w.shape[2], kw = w.shape[3];
    require_count(node, zx, 1, "input zero point");
    require_count(node, zw, std::uint64_t(f), "weights' zero point");
    const Window g = window(node, h, wd, kh, kw);
    Product p{{n, f, g.oh, g.ow}, std::vector<std::int64_t>(std::size_t(n * f * g.oh * g.ow))};
    const std::int64_t x_zero = zero_point(zx, 0);
    for (std::int64_t b = 0; b < n; ++b)
        for (std::int64_t o = 0; o < f; ++o)
            for (std::int64_t oy = 0; oy < g.oh; ++oy)
                for (std::int64_t ox = 0; ox < g.ow; ++ox) {
                    std::int64_t sum = 0;
                    for (std::int64_t ch = 0; ch < c; ++ch)
                        for (std::int64_t ky = 0; ky < kh; ++ky)
                            for (std::int64_t kx = 0; kx < kw; ++kx) {
                                const std::int64_t iy = oy * g.sh - g.pt + ky * g.dh;
                                const std::int64_t ix = ox * g.sw - g.pl + kx * g.dw;
                                if (iy < 0 || iy >= h || ix < 0 || ix >= wd)
                                    continue; // padding: x's zero point, a zero product
                                const std::int64_t xv =
                                    int_at(x, std::uint64_t(((b * c + ch) * h + iy) * wd + ix));
                                const std::int64_t wv =
                                    int_at(w, std::uint64_t(((o * c + ch) * kh + ky) * kw + kx));
                                sum += (xv - x_zero) * (wv - zero_point(zw, std::uint64_t(o)));
                            }
                    p.acc[std::size_t(((b * f + o) * g.oh + oy) * g.ow + ox)] = sum;
                }
    return p;
}

void conv_integer(const Node &node, Inputs in, Outputs out) {
    const Product p = integer_conv(node, input(node, in, 0), optional_input(in, 2),
                                   input(node, in, 1), optional_input(in, 3));
    shape_output(*out[0], DType::Int32, p.shape);
    for (std::size_t i = 0; i < p.acc.size(); ++i)
        store(*out[0], i, 0, std::int32_t(std::uint32_t(p.acc[i])));
}

void qlinear_conv(const Node &node, Inputs in, Outputs out) {
    const Tensor &sx = input(node, in, 1), &sw = input(node, in, 4), &sy = input(node, in, 6);
    const Tensor &zy = input(node, in, 7);
    const Tensor *bias = optional_input(in, 8);
    for (const Tensor *s : {&sx, &sw, &sy})
        require_float(node, *s, "scale");
    Product p = integer_conv(node, input(node, in, 0), &input(node, in, 2), input(node, in, 3),
                             &input(node, in, 5));
    const std::int64_t f = p.shape[1], plane = p.shape[2] * p.shape[3];
    require_count(node, &sx, 1, "input scale");
    require_count(node, &sw, std::uint64_t(f), "weights' scale");
    require_count(node, &sy, 1, "output scale");
    if (bias && (bias->dtype != DType::Int32 || bias->element_count() != std::uint64_t(f)))
        throw KernelError(node, "its bias is not " + std::to_string(f) + " int32 values");
    const DType t = qlinear_output(node, zy);
    shape_output(*out[0], t, p.shape);
    for (std::size_t i = 0; i < p.acc.size(); ++i) {
        const std::uint64_t o = std::uint64_t(std::int64_t(i) / plane % f);
        const std::int64_t acc = p.acc[i] + (bias ? int_at(*bias, o) : 0);
        const float m =
            multiplier(float(real_at(sx, 0)), float(real_at(sw, sw.element_count() == 1 ? 0 : o)),
                       float(real_at(sy, 0)));
        store(*out[0], i, 0, requantize(acc, m, &zy, t));
    }
}

// y_scale = (max(0, max x) - min(0, min x)) / 255, y_zero_point = round(-min / y_scale)
// saturated to uint8, y = QuantizeLinear(x, y_scale, y_zero_point): ONNX's definition.
void dynamic_quantize_linear(const Node &node, Inputs in, Outputs out) {
    const Tensor &x = input(node, in, 0);
    require_float(node, x, "input");
    float lo = 0, hi = 0;
    for (std::uint64_t i = 0; i < x.element_count(); ++i) {
        lo = std::min(lo, float(real_at(x, i)));
        hi = std::max(hi, float(real_at(x, i)));
    }
    const float scale = (hi - lo) / 255.0f;
    const std::int64_t zp = saturate(to_int32((0.0f - lo) / scale), 0, DType::Uint8);
    shape_output(*out[0], DType::Uint8, x.shape);
    out[0]->layout = x.layout;
    for (std::uint64_t i = 0; i < x.element_count(); ++i)
        store(*out[0], i, 0, saturate(to_int32(float(real_at(x, i)) / scale), zp, DType::Uint8));
    shape_output(*out[1], DType::Float, {});
    store(*out[1], 0, scale, 0);
    shape_output(*out[2], DType::Uint8, {});
    store(*out[2], 0, 0, zp);
}

} // namespace

void add_quant_kernels(KernelTable &table) {
    table["QuantizeLinear"] = quantize_linear;
    table["DequantizeLinear"] = dequantize_linear;
    table["MatMulInteger"] = matmul_integer;
    table["QLinearMatMul"] = qlinear_matmul;
    table["ConvInteger"] = conv_integer;
    table["QLinearConv"] = qlinear_conv;
    table["DynamicQuantizeLinear"] = dynamic_quantize_linear;
}

} // namespace tpumodel::cpu
