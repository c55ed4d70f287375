// SPDX-License-Identifier: MIT
// quant_ops.cpp - ONNX's quantised ops on the card, exactly as the CPU kernels compute them
// (tpumodel/quantization.hpp). uint8 tensors live on the card as int8 u - 128 (the executor
// shifts them as it copies), so a difference of two uint8 values is the difference of their card
// values and one int8 path serves both dtypes.
//
// MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv: sum (a - za)(w - zw) =
// a' (w - zw) - za' colsum(w - zw), with a' the card's int8 data and w - zw the constant
// weights centred on their zero points, in [-255, 255]. Those are split into int8 parts
// (clamp to [-128, 127], the rest again) that sum to them, the data repeated once per part
// along K (slice_copy), so one int8 MATMUL (or convolution) into int32 sums a' (w - zw) exactly;
// the za' term is a constant per column (per output position and filter for a padded
// convolution, where the taps over padding are missing from it). Integer outputs add it in
// int32 (VECTOR, wrapping as ONNX's int32 does); QLinear outputs take it as the epilogue's bias
// and the multiplier as its scale, or with a multiplier per column a VECTOR MUL after the
// epilogue (float(acc) + bias is exact: the placement keeps these on the card only while every
// sum is below 2^24); a padded QLinearConv whose input zero point is not the card's 0 is padded
// with it here, so its correction is one per filter. ACTIVATE rounds to int32 half to even, and
// the tail adds the output's zero point within the clamp [-128 - z, 127 - z] (VECTOR MAX, MIN, ADD
// on int32) and keeps each int32's low byte (slice_copy of its bytes): the int8 result.
// QuantizeLinear: VECTOR DIV by the scale, ACTIVATE to int32, the tail. DequantizeLinear:
// ACTIVATE to fp32, VECTOR SUB of the zero point (exact: small integers), VECTOR MUL by the
// scale (one rounding, as ONNX's).
#include "quant_ops.hpp"

#include "op_text.hpp"

#include "tpumodel/cpu_kernels.hpp"
#include "tpumodel/quantization.hpp"
#include "tpumodel/window.hpp"

#include <algorithm>
#include <functional>
#include <map>

namespace tpumodel::card {

namespace {

using Tensors = std::span<const tpurt::Tensor *const>;
using cpu::card_value;

// Input i of `n` if given: a constant (the card's binders read it here), else refused.
const Tensor *constant_at(const Model &m, const Node &n, std::size_t i, const char *what) {
    if (i >= n.inputs.size() || n.inputs[i] == no_tensor)
        return nullptr;
    const Tensor &t = m.tensors[n.inputs[i]];
    if (!t.constant)
        cannot(n, std::string(what) + " computed at run time");
    return &t;
}
const Tensor &required_constant(const Model &m, const Node &n, std::size_t i, const char *what) {
    const Tensor *t = constant_at(m, n, i, what);
    if (!t)
        cannot(n, std::string(what) + " is missing");
    return *t;
}

template <class T>
tpurt::Tensor upload(tpurt::Device &d, const std::vector<T> &v, std::vector<std::size_t> shape) {
    return tpurt::Tensor::from_host<T>(d, std::span<const T>(v), std::move(shape));
}

void append(tpurt::OpSequence &ops, const tpurt::OpSequence &more) {
    ops.launches.insert(ops.launches.end(), more.launches.begin(), more.launches.end());
}

void elementwise(tpurt::Device &d, tpurt::OpSequence &ops, const char *op, const tpurt::Tensor &a,
                 const tpurt::Tensor &b, const tpurt::Tensor &out) {
    Attributes attributes;
    attributes.add("op", op);
    append(ops, prepare(d, "elementwise", {&a, &b, &out}, attributes));
}

void permute(tpurt::Device &d, tpurt::OpSequence &ops, const tpurt::Tensor &a,
             const tpurt::Tensor &out, const char *order) {
    Attributes attributes;
    attributes.add("order", order);
    append(ops, prepare(d, "permute", {&a, &out}, attributes));
}

// A tensor of a quantised op's data seen as [rows, length], every row taking its per-tensor or
// per-axis parameters in the same order: `channel` holds each position's.
struct RowView {
    std::size_t rows = 1, length = 1;
    std::vector<std::size_t> channel;
};

RowView row_view(const Node &n, const std::vector<std::int64_t> &shape, const Tensor &param,
                 const Tensor *zp) {
    if (zp && zp->element_count() != param.element_count())
        cannot(n,
               "a zero point of " + zp->shape_string() + " for a scale of " + param.shape_string());
    const std::optional<cpu::Channels> c =
        cpu::channels(shape, n.get_int("axis", 1), param.element_count());
    if (!c)
        cannot(n, "a parameter of " + param.shape_string() + " for data of " +
                      std::to_string(shape.size()) + " axes");
    std::size_t total = 1;
    for (std::int64_t e : shape)
        total *= std::size_t(e);
    RowView v;
    v.length = c->count > 1 ? std::size_t(c->count * c->inner)
                            : (shape.empty() ? 1 : std::size_t(shape.back()));
    if (total == 0)
        cannot(n, "empty data");
    v.rows = total / v.length;
    for (std::size_t j = 0; j < v.length; ++j)
        v.channel.push_back(c->of(j));
    return v;
}

// The tail of a requantisation: r (int32 [rows, length], scratch, overwritten) plus the zero
// point z (card values, one per position in a row), saturated to int8, into `out` ([rows,
// length] int8).
void saturate_into(tpurt::Device &d, tpurt::OpSequence &ops, const tpurt::Tensor &r,
                   const std::vector<std::int64_t> &z, const tpurt::Tensor &out) {
    const std::size_t length = r.shape().back();
    std::vector<std::int32_t> lo(length), hi(length), zero(length);
    for (std::size_t j = 0; j < length; ++j) {
        lo[j] = std::int32_t(-128 - z[j]);
        hi[j] = std::int32_t(127 - z[j]);
        zero[j] = std::int32_t(z[j]);
    }
    elementwise(d, ops, "max", r, upload(d, lo, {1, length}), r);
    elementwise(d, ops, "min", r, upload(d, hi, {1, length}), r);
    if (std::any_of(zero.begin(), zero.end(), [](std::int32_t v) { return v != 0; }))
        elementwise(d, ops, "add", r, upload(d, zero, {1, length}), r);
    // Each int32 in [-128, 127] holds its int8 value in its first (low) byte.
    const std::size_t count = r.element_count();
    const tpurt::Tensor bytes(r.storage(),
                              tpurt::TensorLayout::contiguous(tpurt::DType::Int8, {count, 4}));
    slice_copy(d, ops, bytes, out.reshape({count, 1}), 1, 0, 0, 1);
}

tpurt::OpSequence quantize_linear(tpurt::Device &d, const Model &m, const Node &n, Tensors in,
                                  Tensors out) {
    const Tensor &scale = required_constant(m, n, 1, "the scale");
    const Tensor *zp = constant_at(m, n, 2, "the zero point");
    const RowView v = row_view(n, m.tensors[n.inputs[0]].shape, scale, zp);
    const DType type = zp ? zp->dtype : DType::Uint8;
    std::vector<float> s(v.length);
    std::vector<std::int64_t> z(v.length);
    for (std::size_t j = 0; j < v.length; ++j) {
        s[j] = float(cpu::real_at(scale, v.channel[j]));
        z[j] = card_value(type, cpu::zero_point(zp, v.channel[j]));
    }
    tpurt::OpSequence ops;
    const tpurt::Tensor x = in[0]->reshape({v.rows, v.length});
    const tpurt::Tensor q = tpurt::Tensor::empty(d, tpurt::DType::Fp32, {v.rows, v.length});
    const tpurt::Tensor r = tpurt::Tensor::empty(d, tpurt::DType::Int32, {v.rows, v.length});
    elementwise(d, ops, "div", x, upload(d, s, {1, v.length}), q);
    Attributes cast;
    cast.add("function", "none");
    append(ops, prepare(d, "unary", {&q, &r}, cast));
    saturate_into(d, ops, r, z, out[0]->reshape({v.rows, v.length}));
    return ops;
}

tpurt::OpSequence dequantize_linear(tpurt::Device &d, const Model &m, const Node &n, Tensors in,
                                    Tensors out) {
    const Tensor &x = m.tensors[n.inputs[0]];
    const Tensor &scale = required_constant(m, n, 1, "the scale");
    const Tensor *zp = constant_at(m, n, 2, "the zero point");
    const RowView v = row_view(n, x.shape, scale, zp);
    std::vector<float> s(v.length), z(v.length);
    for (std::size_t j = 0; j < v.length; ++j) {
        s[j] = float(cpu::real_at(scale, v.channel[j]));
        z[j] = float(card_value(x.dtype, cpu::zero_point(zp, v.channel[j])));
    }
    tpurt::OpSequence ops;
    const tpurt::Tensor f = tpurt::Tensor::empty(d, tpurt::DType::Fp32, {v.rows, v.length});
    Attributes cast;
    cast.add("function", "none");
    const tpurt::Tensor xv = in[0]->reshape({v.rows, v.length});
    append(ops, prepare(d, "unary", {&xv, &f}, cast));
    if (std::any_of(z.begin(), z.end(), [](float e) { return e != 0; }))
        elementwise(d, ops, "sub", f, upload(d, z, {1, v.length}), f);
    elementwise(d, ops, "mul", f, upload(d, s, {1, v.length}), out[0]->reshape({v.rows, v.length}));
    return ops;
}

// Centred weights as int8 parts that sum to them, element by element (at most 3 parts: the
// centred values lie in [-255, 255]).
std::vector<std::vector<std::int8_t>> int8_parts(std::vector<std::int64_t> rest) {
    std::vector<std::vector<std::int8_t>> parts;
    for (bool more = true; more;) {
        std::vector<std::int8_t> part(rest.size());
        more = false;
        for (std::size_t i = 0; i < rest.size(); ++i) {
            part[i] = std::int8_t(std::clamp<std::int64_t>(rest[i], -128, 127));
            rest[i] -= part[i];
            more = more || rest[i] != 0;
        }
        parts.push_back(std::move(part));
    }
    return parts;
}

// `a` repeated `times` along its last axis into a scratch tensor (`a` itself once).
tpurt::Tensor repeated(tpurt::Device &d, tpurt::OpSequence &ops, const tpurt::Tensor &a,
                       std::size_t times) {
    if (times == 1)
        return a;
    std::vector<std::size_t> shape = a.shape();
    const std::size_t axis = shape.size() - 1, length = shape.back();
    shape.back() *= times;
    tpurt::Tensor t = tpurt::Tensor::empty(d, a.dtype(), shape);
    for (std::size_t p = 0; p < times; ++p)
        slice_copy(d, ops, a, t, axis, 0, p * length, length);
    return t;
}

template <class T> bool any_nonzero(const std::vector<T> &v) {
    return std::any_of(v.begin(), v.end(), [](T e) { return e != 0; });
}

// The output zero point of a QLinear op as card values, `count` times.
std::vector<std::int64_t> output_zero(const Model &m, const Node &n, std::size_t count) {
    const Tensor &zy = required_constant(m, n, 7, "the output zero point");
    return std::vector<std::int64_t>(count, card_value(zy.dtype, cpu::zero_point(&zy, 0)));
}

// A QLinear op's multiplier per output column (B's column, the convolution's filter).
std::vector<float> qlinear_multipliers(const Model &m, const Node &n, std::size_t cols) {
    const Tensor &sa = required_constant(m, n, 1, "the first operand's scale");
    const Tensor &sb = required_constant(m, n, 4, "the weights' scale");
    const Tensor &sy = required_constant(m, n, 6, "the output scale");
    if (sa.element_count() != 1 || sy.element_count() != 1 ||
        (sb.element_count() != 1 && sb.element_count() != cols))
        cannot(n, "scales of other sizes than one value, or one per output column");
    std::vector<float> v(cols);
    for (std::size_t j = 0; j < cols; ++j)
        v[j] = cpu::multiplier(float(cpu::real_at(sa, 0)),
                               float(cpu::real_at(sb, sb.element_count() == 1 ? 0 : j)),
                               float(cpu::real_at(sy, 0)));
    return v;
}

// Prepares a QLinear op's product (its correction as the epilogue's bias) into `acc` scaled by
// `scale`.
using Product = std::function<void(const tpurt::Tensor &acc, float scale)>;

// A QLinear op's product requantised into `y` (int8 of acc_shape, its last axis the output
// columns). One multiplier: the epilogue's scale, into int32. One per column: the epilogue into
// fp32 unscaled (exact: its sums are below 2^24), VECTOR MUL by the row of multipliers (the one
// rounding the CPU's float(acc) x multiplier makes), ACTIVATE to int32. Then the tail.
void requantized(tpurt::Device &d, tpurt::OpSequence &ops, const Model &m, const Node &n,
                 const std::vector<std::size_t> &acc_shape, const Product &product,
                 const tpurt::Tensor &y) {
    const std::size_t cols = acc_shape.back();
    std::size_t rows = 1;
    for (std::size_t i = 0; i + 1 < acc_shape.size(); ++i)
        rows *= acc_shape[i];
    const std::vector<float> multipliers = qlinear_multipliers(m, n, cols);
    const tpurt::Tensor r = tpurt::Tensor::empty(d, tpurt::DType::Int32, acc_shape);
    if (std::all_of(multipliers.begin(), multipliers.end(),
                    [&](float v) { return v == multipliers[0]; })) {
        product(r, multipliers[0]);
    } else {
        const tpurt::Tensor f = tpurt::Tensor::empty(d, tpurt::DType::Fp32, acc_shape);
        product(f, 1.0f);
        const tpurt::Tensor fv = f.reshape({rows, cols}), rv = r.reshape({rows, cols});
        elementwise(d, ops, "mul", fv, upload(d, multipliers, {1, cols}), fv);
        Attributes cast;
        cast.add("function", "none");
        append(ops, prepare(d, "unary", {&fv, &rv}, cast));
    }
    saturate_into(d, ops, r.reshape({rows, cols}), output_zero(m, n, cols),
                  y.reshape({rows, cols}));
}

// MatMulInteger and QLinearMatMul: A [..., M, K] on the card by constant B [K, N] (A's rows as
// one matrix) or of A's batch (a product per matrix).
tpurt::OpSequence integer_matmul(tpurt::Device &d, const Model &m, const Node &n, Tensors in,
                                 Tensors out) {
    const bool qlinear = n.op == "QLinearMatMul";
    const Tensor &a = m.tensors[n.inputs[0]];
    const Tensor &b = required_constant(m, n, qlinear ? 3 : 1, "B");
    const Tensor *za = constant_at(m, n, 2, "A's zero point");
    const Tensor *zb = constant_at(m, n, qlinear ? 5 : 3, "B's zero point");
    const bool batched = b.shape.size() > 2;
    if (a.shape.size() < 2 || b.shape.size() < 2 || a.shape.back() != b.shape[b.shape.size() - 2] ||
        (batched && (a.shape.size() != b.shape.size() ||
                     !std::equal(b.shape.begin(), b.shape.end() - 2, a.shape.begin()))) ||
        a.element_count() == 0 || b.element_count() == 0 || (za && za->element_count() != 1) ||
        (zb && zb->element_count() != 1 && zb->element_count() != std::uint64_t(b.shape.back())))
        cannot(n, "A " + a.shape_string() + ", B " + b.shape_string() +
                      " or their zero points do not fit");
    const std::size_t k = std::size_t(a.shape.back()), cols = std::size_t(b.shape.back());
    const std::size_t batches = b.shape.size() > 2 ? b.element_count() / (k * cols) : 1;
    const std::size_t rows = a.element_count() / k / batches;
    const tpurt::Tensor a3 = in[0]->reshape({batches, rows, k});
    const tpurt::Tensor y3 = out[0]->reshape({batches, rows, cols});
    const std::int64_t a_zero = card_value(a.dtype, cpu::zero_point(za, 0));
    tpurt::OpSequence ops;
    for (std::size_t s = 0; s < batches; ++s) {
        std::vector<std::int64_t> centred(k * cols), correction(cols);
        for (std::size_t i = 0; i < k * cols; ++i) {
            centred[i] = cpu::int_at(b, s * k * cols + i) - cpu::zero_point(zb, i % cols);
            correction[i % cols] -= a_zero * centred[i];
        }
        const std::vector<std::vector<std::int8_t>> parts = int8_parts(centred);
        std::vector<std::int8_t> stacked;
        for (const std::vector<std::int8_t> &p : parts)
            stacked.insert(stacked.end(), p.begin(), p.end());
        const tpurt::Tensor w = upload(d, stacked, {parts.size() * k, cols});
        const tpurt::Tensor x = repeated(d, ops, a3.select(0, s), parts.size());
        const tpurt::Tensor y = y3.select(0, s);
        if (!qlinear) {
            append(ops, prepare(d, "matmul", {&x, &w, &y}));
            std::vector<std::int32_t> c(cols);
            for (std::size_t j = 0; j < cols; ++j)
                c[j] = std::int32_t(std::uint32_t(correction[j])); // ONNX's int32 wraps
            if (any_nonzero(c))
                elementwise(d, ops, "add", y, upload(d, c, {1, cols}), y);
            continue;
        }
        const tpurt::Tensor bias =
            upload(d, std::vector<float>(correction.begin(), correction.end()), {cols});
        const Product dense = [&](const tpurt::Tensor &acc, float scale) {
            Attributes epilogue;
            epilogue.add("activation", "none").add("scale", scale);
            append(ops, prepare(d, "dense", {&x, &w, &acc, &bias}, epilogue));
        };
        requantized(d, ops, m, n, {rows, cols}, dense, y);
    }
    return ops;
}

// ConvInteger and QLinearConv: NCHW data and OIHW constant weights (group 1, no dilation,
// symmetric padding), through the card's NHWC x HWIO convolution between two permutes.
tpurt::OpSequence integer_conv(tpurt::Device &d, const Model &m, const Node &n, Tensors in,
                               Tensors out) {
    const bool qlinear = n.op == "QLinearConv";
    const Tensor &x = m.tensors[n.inputs[0]];
    const Tensor &w = required_constant(m, n, qlinear ? 3 : 1, "the weights");
    const Tensor *zx = constant_at(m, n, 2, "the input's zero point");
    const Tensor *zw = constant_at(m, n, qlinear ? 5 : 3, "the weights' zero point");
    if (x.shape.size() != 4 || w.shape.size() != 4 || w.shape[1] != x.shape[1] ||
        x.element_count() == 0 || w.element_count() == 0 || (zx && zx->element_count() != 1) ||
        (zw && zw->element_count() != 1 && zw->element_count() != std::uint64_t(w.shape[0])))
        cannot(n, "data " + x.shape_string() + ", weights " + w.shape_string() +
                      " or their zero points do not fit a 2-D convolution");
    const std::size_t batch = std::size_t(x.shape[0]), c = std::size_t(x.shape[1]);
    const std::size_t h = std::size_t(x.shape[2]), wd = std::size_t(x.shape[3]);
    const std::size_t f = std::size_t(w.shape[0]), kh = std::size_t(w.shape[2]),
                      kw = std::size_t(w.shape[3]);
    cpu::Window g{};
    try {
        g = cpu::window(n, std::int64_t(h), std::int64_t(wd), std::int64_t(kh), std::int64_t(kw));
    } catch (const cpu::KernelError &e) {
        cannot(n, e.reason());
    }
    if (g.pt != g.pb || g.pl != g.pr || g.dh != 1 || g.dw != 1 || n.get_int("group", 1) != 1)
        cannot(n, "asymmetric padding, dilation or groups");
    const std::size_t oh = std::size_t(g.oh), ow = std::size_t(g.ow);
    const std::int64_t x_zero = card_value(x.dtype, cpu::zero_point(zx, 0));
    // QLinearConv's epilogue takes a correction per filter only: a padded image whose zero
    // point is not the card's 0 is padded here, with its zero point, and convolved unpadded.
    const bool pad_here = qlinear && (g.pt != 0 || g.pl != 0) && x_zero != 0;
    const std::size_t pt = pad_here ? 0 : std::size_t(g.pt), pl = pad_here ? 0 : std::size_t(g.pl);
    const std::size_t ih = h + 2 * (std::size_t(g.pt) - pt), iw = wd + 2 * (std::size_t(g.pl) - pl);

    // Centred weights in HWIO order, their sums over the channels per tap, and the correction
    // -x_zero x (the sum over the taps that fall on the image the card convolves) per output
    // position and filter.
    std::vector<std::int64_t> centred(kh * kw * c * f), tap_sum(kh * kw * f);
    for (std::size_t o = 0; o < f; ++o)
        for (std::size_t ch = 0; ch < c; ++ch)
            for (std::size_t t = 0; t < kh * kw; ++t) {
                const std::int64_t v =
                    cpu::int_at(w, (o * c + ch) * kh * kw + t) - cpu::zero_point(zw, o);
                centred[(t * c + ch) * f + o] = v;
                tap_sum[t * f + o] += v;
            }
    std::vector<std::int64_t> correction(oh * ow * f);
    for (std::size_t oy = 0; oy < oh; ++oy)
        for (std::size_t ox = 0; ox < ow; ++ox)
            for (std::size_t t = 0; t < kh * kw; ++t) {
                const std::int64_t iy =
                    std::int64_t(oy) * g.sh - std::int64_t(pt) + std::int64_t(t / kw);
                const std::int64_t ix =
                    std::int64_t(ox) * g.sw - std::int64_t(pl) + std::int64_t(t % kw);
                if (iy < 0 || iy >= std::int64_t(ih) || ix < 0 || ix >= std::int64_t(iw))
                    continue;
                for (std::size_t o = 0; o < f; ++o)
                    correction[(oy * ow + ox) * f + o] -= x_zero * tap_sum[t * f + o];
            }
    const std::vector<std::vector<std::int8_t>> parts = int8_parts(centred);
    const std::size_t pc = parts.size() * c;
    std::vector<std::int8_t> hwio(kh * kw * pc * f);
    for (std::size_t p = 0; p < parts.size(); ++p)
        for (std::size_t t = 0; t < kh * kw; ++t)
            for (std::size_t i = 0; i < c * f; ++i)
                hwio[(t * pc + p * c) * f + i] = parts[p][t * c * f + i];
    const tpurt::Tensor weights = upload(d, hwio, {kh, kw, pc, f});

    tpurt::OpSequence ops;
    const tpurt::Tensor nhwc = tpurt::Tensor::empty(d, tpurt::DType::Int8, {batch, h, wd, c});
    permute(d, ops, *in[0], nhwc, "0,2,3,1");
    tpurt::Tensor image = nhwc;
    if (pad_here) { // the zero point around the image, uploaded once; its rows copied in
        image = upload(d, std::vector<std::int8_t>(batch * ih * iw * c, std::int8_t(x_zero)),
                       {batch, ih, iw, c});
        for (std::size_t b = 0; b < batch; ++b)
            for (std::size_t y = 0; y < h; ++y)
                slice_copy(d, ops, nhwc.select(0, b).select(0, y),
                           image.select(0, b).select(0, y + std::size_t(g.pt)), 0, 0,
                           std::size_t(g.pl), wd);
    }
    const tpurt::Tensor input = repeated(d, ops, image, parts.size());
    const auto window = [&](Attributes &a) -> Attributes & {
        return a.add("stride_h", g.sh)
            .add("stride_w", g.sw)
            .add("pad_h", std::int64_t(pt))
            .add("pad_w", std::int64_t(pl));
    };
    const tpurt::Tensor acc = tpurt::Tensor::empty(d, tpurt::DType::Int32, {batch, oh, ow, f});
    if (!qlinear) {
        Attributes a;
        append(ops, prepare(d, "conv2d", {&input, &weights, &acc}, window(a)));
        std::vector<std::int32_t> t(correction.size());
        for (std::size_t i = 0; i < t.size(); ++i)
            t[i] = std::int32_t(std::uint32_t(correction[i])); // ONNX's int32 wraps
        if (any_nonzero(t)) {
            const tpurt::Tensor flat = acc.reshape({batch, oh * ow * f});
            elementwise(d, ops, "add", flat, upload(d, t, {1, oh * ow * f}), flat);
        }
        permute(d, ops, acc, *out[0], "0,3,1,2");
        return ops;
    }
    const Tensor *b = constant_at(m, n, 8, "the bias");
    if (b && b->element_count() != f)
        cannot(n, "a bias of " + b->shape_string() + " for " + std::to_string(f) + " filters");
    std::vector<float> bias(f);
    for (std::size_t o = 0; o < f; ++o)
        bias[o] = float(correction[o] + (b ? cpu::int_at(*b, o) : 0));
    const tpurt::Tensor bias_t = upload(d, bias, {f});
    const Product conv = [&](const tpurt::Tensor &result, float scale) {
        Attributes a;
        window(a).add("activation", "none").add("scale", scale);
        append(ops, prepare(d, "conv2d_layer", {&input, &weights, &result, &bias_t}, a));
    };
    const tpurt::Tensor y = tpurt::Tensor::empty(d, tpurt::DType::Int8, {batch, oh, ow, f});
    requantized(d, ops, m, n, {batch, oh, ow, f}, conv, y);
    permute(d, ops, y, *out[0], "0,3,1,2");
    return ops;
}

} // namespace

QuantBinder quant_binder(const std::string &op) {
    static const std::map<std::string, QuantBinder> binders = {
        {"QuantizeLinear", quantize_linear}, {"DequantizeLinear", dequantize_linear},
        {"MatMulInteger", integer_matmul},   {"QLinearMatMul", integer_matmul},
        {"ConvInteger", integer_conv},       {"QLinearConv", integer_conv}};
    const auto it = binders.find(op);
    return it == binders.end() ? nullptr : it->second;
}

} // namespace tpumodel::card
