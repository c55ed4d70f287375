// SPDX-License-Identifier: MIT
// nn_kernels.cpp - the reference kernels of the network ops, in binary32 with sums in index
// order: Conv (NHWC x HWIO; bias, groups, dilation, pads or auto_pad, a fused Relu), MaxPool
// (8-bit data too) and AveragePool (NHWC, ceil_mode), GlobalAveragePool and GlobalMaxPool (NHWC
// or NCHW), Gemm (alpha, beta, transposes, a broadcast C, a fused Relu), MatMul (2-D and
// batched), Softmax and LogSoftmax (any axis). The references of the card's ops and the CPU's
// share of a model.
#include "kernel_support.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tpumodel::cpu {

namespace {

using Inputs = std::span<const Tensor *const>;
using Outputs = std::span<Tensor *const>;

std::vector<float> floats(const Node &node, const Tensor *t, const char *what) {
    if (!t)
        throw KernelError(node, std::string("its ") + what + " is missing");
    if (t->dtype != DType::Float && t->dtype != DType::Bfloat16)
        throw KernelError(node, std::string("its ") + what + " is " + dtype_name(t->dtype) +
                                    ", not float32 or bfloat16");
    std::vector<float> v(t->element_count());
    for (std::uint64_t i = 0; i < v.size(); ++i)
        v[i] = float(real_at(*t, i));
    return v;
}

// The integer a float holds, for an integer output: NaN as 0, others clamped to int64's range
// (converting them unclamped is undefined).
std::int64_t integer_of(float v) {
    if (std::isnan(v))
        return 0;
    constexpr float limit = 9.2233720368547758e18f; // 2^63
    if (v >= limit)
        return std::numeric_limits<std::int64_t>::max();
    if (v < -limit)
        return std::numeric_limits<std::int64_t>::min();
    return std::int64_t(v);
}

void write(Tensor &y, DType dtype, std::vector<std::int64_t> shape, Layout layout,
           const std::vector<float> &v) {
    shape_output(y, dtype, std::move(shape));
    y.layout = layout;
    for (std::uint64_t i = 0; i < v.size(); ++i) // integer dtypes: values that are integers
        store(y, i, v[i], integer_of(v[i]));
}

float activate(const Node &node, float v) {
    const std::string act = node.get_string("activation", "");
    if (act.empty())
        return v;
    if (act == "Relu")
        return v > 0 ? v : 0.0f;
    throw KernelError(node, "unknown fused activation '" + act + "'");
}

} // namespace

Window window(const Node &node, std::int64_t h, std::int64_t w, std::int64_t kh, std::int64_t kw) {
    const std::vector<std::int64_t> s = node.get_ints("strides", {1, 1});
    const std::vector<std::int64_t> d = node.get_ints("dilations", {1, 1});
    std::vector<std::int64_t> p = node.get_ints("pads", {0, 0, 0, 0});
    if (s.size() != 2 || d.size() != 2 || p.size() != 4)
        throw KernelError(node, "strides, dilations and pads must be 2-D");
    if (s[0] < 1 || s[1] < 1 || d[0] < 1 || d[1] < 1)
        throw KernelError(node, "strides and dilations must be positive");
    const bool ceil = node.get_int("ceil_mode", 0) != 0;
    const std::int64_t eh = (kh - 1) * d[0] + 1, ew = (kw - 1) * d[1] + 1;
    const std::string auto_pad = node.get_string("auto_pad", "NOTSET");
    if (auto_pad == "VALID") {
        p = {0, 0, 0, 0};
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
        const std::int64_t ext[2] = {eh, ew}, size[2] = {h, w};
        for (std::size_t i = 0; i < 2; ++i) {
            const std::int64_t out = (size[i] + s[i] - 1) / s[i];
            const std::int64_t total =
                std::max<std::int64_t>((out - 1) * s[i] + ext[i] - size[i], 0);
            p[i] = auto_pad == "SAME_LOWER" ? total - total / 2 : total / 2;
            p[i + 2] = total - p[i];
        }
    } else if (auto_pad != "NOTSET") {
        throw KernelError(node, "unknown auto_pad '" + auto_pad + "'");
    }
    // ceil_mode 1 rounds the output's size up, but no window may start in the end padding.
    const auto out_size = [&](std::int64_t size, std::int64_t begin, std::int64_t end,
                              std::int64_t extent, std::int64_t stride) -> std::int64_t {
        const std::int64_t span = size + begin + end - extent;
        if (span < 0)
            throw KernelError(node, "the window is larger than the padded image");
        std::int64_t o = (ceil ? span + stride - 1 : span) / stride + 1;
        if (ceil && (o - 1) * stride >= size + begin)
            --o;
        return o;
    };
    const std::int64_t oh = out_size(h, p[0], p[2], eh, s[0]),
                       ow = out_size(w, p[1], p[3], ew, s[1]);
    return {kh, kw, s[0], s[1], d[0], d[1], p[0], p[1], p[2], p[3], oh, ow};
}

namespace {

void require_nhwc(const Node &node, const Tensor &x) {
    if (x.layout != Layout::Nhwc || x.shape.size() != 4)
        throw KernelError(node, "tensor '" + x.name + "' is not an NHWC image");
}

// `t`'s stored axes permuted by the Transpose kernel, labelled `layout`.
Tensor permuted(const Tensor &t, std::vector<std::int64_t> perm, Layout layout) {
    Node n{"permute", "Transpose", Placement::Cpu, "", "", {}, {}, {}};
    n.set("perm", std::move(perm));
    Tensor result;
    const Tensor *from[] = {&t};
    Tensor *to[] = {&result};
    find_kernel("Transpose")(n, std::span<const Tensor *const>(from, 1),
                             std::span<Tensor *const>(to, 1));
    result.layout = layout;
    return result;
}

void conv_nhwc(const Node &node, Inputs in, Outputs out);

// Conv in ONNX's NCHW x OIHW (weights computed at run time stay so): through NHWC x HWIO.
void conv_kernel(const Node &node, Inputs in, Outputs out) {
    input(node, in, 1);
    if (input(node, in, 0).layout == Layout::Nhwc)
        return conv_nhwc(node, in, out);
    if (in[0]->shape.size() != 4 || in[1]->shape.size() != 4)
        throw KernelError(node, "the CPU kernel runs 2-D convolutions only");
    const Tensor x = permuted(*in[0], {0, 2, 3, 1}, Layout::Nhwc);
    const Tensor w = permuted(*in[1], {2, 3, 1, 0}, Layout::Hwio);
    const Tensor *args[] = {&x, &w, in.size() > 2 ? in[2] : nullptr};
    Tensor y;
    Tensor *result[] = {&y};
    conv_nhwc(node, std::span<const Tensor *const>(args, in.size() > 2 ? 3 : 2),
              std::span<Tensor *const>(result, 1));
    *out[0] = permuted(y, {0, 3, 1, 2}, Layout::Plain);
}

void conv_nhwc(const Node &node, Inputs in, Outputs out) {
    const Tensor &x = input(node, in, 0);
    require_nhwc(node, x);
    const Tensor &wt = input(node, in, 1);
    if (wt.layout != Layout::Hwio || wt.shape.size() != 4)
        throw KernelError(node, "its weights are not 4-D in the HWIO layout");
    const std::vector<float> xs = floats(node, &x, "input"), ws = floats(node, &wt, "weights");
    const std::vector<float> bs =
        in.size() > 2 && in[2] ? floats(node, in[2], "bias") : std::vector<float>();
    const std::int64_t n = x.shape[0], h = x.shape[1], w = x.shape[2], c = x.shape[3];
    const std::int64_t kh = wt.shape[0], kw = wt.shape[1], ci = wt.shape[2], f = wt.shape[3];
    const std::int64_t groups = node.get_int("group", 1);
    if (groups < 1 || c != ci * groups || f % groups != 0)
        throw KernelError(node, "channels " + std::to_string(c) + ", weights " + wt.shape_string() +
                                    " and group " + std::to_string(groups) + " do not fit");
    if (!bs.empty() && bs.size() != std::size_t(f))
        throw KernelError(node, "its bias does not hold one value per filter");
    const Window g = window(node, x.shape[1], x.shape[2], kh, kw);
    const std::int64_t fg = f / groups;
    std::vector<float> y(std::size_t(n * g.oh * g.ow * f));
    for (std::int64_t b = 0; b < n; ++b)
        for (std::int64_t oy = 0; oy < g.oh; ++oy)
            for (std::int64_t ox = 0; ox < g.ow; ++ox)
                for (std::int64_t o = 0; o < f; ++o) {
                    const std::int64_t group = o / fg;
                    float acc = 0;
                    for (std::int64_t ky = 0; ky < kh; ++ky)
                        for (std::int64_t kx = 0; kx < kw; ++kx) {
                            const std::int64_t iy = oy * g.sh - g.pt + ky * g.dh;
                            const std::int64_t ix = ox * g.sw - g.pl + kx * g.dw;
                            if (iy < 0 || iy >= h || ix < 0 || ix >= w)
                                continue;
                            for (std::int64_t i = 0; i < ci; ++i)
                                acc +=
                                    xs[std::size_t(((b * h + iy) * w + ix) * c + group * ci + i)] *
                                    ws[std::size_t(((ky * kw + kx) * ci + i) * f + o)];
                        }
                    if (!bs.empty())
                        acc += bs[std::size_t(o)];
                    y[std::size_t(((b * g.oh + oy) * g.ow + ox) * f + o)] = activate(node, acc);
                }
    write(*out[0], x.dtype, {n, g.oh, g.ow, f}, Layout::Nhwc, y);
}

void pool_kernel(const Node &node, Inputs in, Outputs out) {
    const Tensor &x = input(node, in, 0);
    require_nhwc(node, x);
    const std::vector<std::int64_t> k = node.get_ints("kernel_shape", {});
    if (k.size() != 2)
        throw KernelError(node, "kernel_shape must be 2-D");
    const bool is_max = node.op == "MaxPool";
    const bool count_pad = node.get_int("count_include_pad", 0) != 0;
    const Window g = window(node, x.shape[1], x.shape[2], k[0], k[1]);
    // MaxPool of 8-bit data: the values are exact in binary32 and the maximum is one of them.
    const bool eight_bit = x.dtype == DType::Uint8 || x.dtype == DType::Int8;
    if (eight_bit && !is_max)
        throw KernelError(node, std::string("AveragePool of ") + dtype_name(x.dtype) + " data");
    std::vector<float> xs(x.element_count());
    if (eight_bit)
        for (std::uint64_t i = 0; i < xs.size(); ++i)
            xs[i] = float(int_at(x, i));
    else
        xs = floats(node, &x, "input");
    const std::int64_t n = x.shape[0], h = x.shape[1], w = x.shape[2], c = x.shape[3];
    std::vector<float> y(std::size_t(n * g.oh * g.ow * c));
    for (std::int64_t b = 0; b < n; ++b)
        for (std::int64_t oy = 0; oy < g.oh; ++oy)
            for (std::int64_t ox = 0; ox < g.ow; ++ox)
                for (std::int64_t ch = 0; ch < c; ++ch) {
                    float acc = is_max ? -std::numeric_limits<float>::infinity() : 0.0f;
                    std::int64_t count = 0;
                    for (std::int64_t ky = 0; ky < g.kh; ++ky)
                        for (std::int64_t kx = 0; kx < g.kw; ++kx) {
                            const std::int64_t iy = oy * g.sh - g.pt + ky * g.dh;
                            const std::int64_t ix = ox * g.sw - g.pl + kx * g.dw;
                            const bool inside = iy >= 0 && iy < h && ix >= 0 && ix < w;
                            count += inside || count_pad;
                            if (!inside)
                                continue;
                            const float v = xs[std::size_t(((b * h + iy) * w + ix) * c + ch)];
                            acc = is_max ? std::max(acc, v) : acc + v;
                        }
                    y[std::size_t(((b * g.oh + oy) * g.ow + ox) * c + ch)] =
                        is_max ? acc : acc / float(count);
                }
    write(*out[0], x.dtype, {n, g.oh, g.ow, c}, Layout::Nhwc, y);
}

void global_pool_kernel(const Node &node, Inputs in, Outputs out) {
    const Tensor &x = input(node, in, 0);
    if (x.shape.size() != 4)
        throw KernelError(node, "takes a 4-D image");
    const bool nhwc = x.layout == Layout::Nhwc, is_max = node.op == "GlobalMaxPool";
    const std::int64_t n = x.shape[0], c = nhwc ? x.shape[3] : x.shape[1];
    const std::int64_t area = nhwc ? x.shape[1] * x.shape[2] : x.shape[2] * x.shape[3];
    const std::vector<float> xs = floats(node, &x, "input");
    std::vector<float> y(std::size_t(n * c));
    for (std::int64_t b = 0; b < n; ++b)
        for (std::int64_t ch = 0; ch < c; ++ch) {
            float acc = is_max ? -std::numeric_limits<float>::infinity() : 0.0f;
            for (std::int64_t i = 0; i < area; ++i) {
                const float v =
                    xs[std::size_t(nhwc ? (b * area + i) * c + ch : (b * c + ch) * area + i)];
                acc = is_max ? std::max(acc, v) : acc + v;
            }
            y[std::size_t(b * c + ch)] = is_max ? acc : acc / float(area);
        }
    write(*out[0], x.dtype,
          nhwc ? std::vector<std::int64_t>{n, 1, 1, c} : std::vector<std::int64_t>{n, c, 1, 1},
          x.layout, y);
}

void gemm_kernel(const Node &node, Inputs in, Outputs out) {
    if (in.size() < 2 || !in[0] || !in[1] || in[0]->shape.size() != 2 || in[1]->shape.size() != 2)
        throw KernelError(node, "takes 2-D A and B");
    const bool ta = node.get_int("transA", 0) != 0, tb = node.get_int("transB", 0) != 0;
    const std::int64_t m = in[0]->shape[ta ? 1 : 0], k = in[0]->shape[ta ? 0 : 1];
    const std::int64_t n = in[1]->shape[tb ? 0 : 1];
    if (in[1]->shape[tb ? 1 : 0] != k)
        throw KernelError(node, "A " + in[0]->shape_string() + " and B " + in[1]->shape_string() +
                                    " do not multiply");
    const std::vector<float> a = floats(node, in[0], "A"), b = floats(node, in[1], "B");
    const float alpha = node.get_float("alpha", 1.0f), beta = node.get_float("beta", 1.0f);
    const Tensor *c = in.size() > 2 ? in[2] : nullptr;
    const std::vector<float> cs = c ? floats(node, c, "C") : std::vector<float>();
    const std::int64_t c_rows = c && c->shape.size() == 2 ? c->shape[0] : 1;
    const std::int64_t c_cols = c && !c->shape.empty() ? c->shape.back() : 1;
    if (c && ((c_rows != 1 && c_rows != m) || (c_cols != 1 && c_cols != n)))
        throw KernelError(node, "C " + c->shape_string() + " does not broadcast to [" +
                                    std::to_string(m) + ", " + std::to_string(n) + "]");
    std::vector<float> y(std::size_t(m * n));
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            float acc = 0;
            for (std::int64_t p = 0; p < k; ++p)
                acc += a[std::size_t(ta ? p * m + i : i * k + p)] *
                       b[std::size_t(tb ? j * k + p : p * n + j)];
            float v = alpha * acc;
            if (c)
                v += beta * cs[std::size_t((c_rows == 1 ? 0 : i) * c_cols + (c_cols == 1 ? 0 : j))];
            y[std::size_t(i * n + j)] = activate(node, v);
        }
    write(*out[0], in[0]->dtype, {m, n}, Layout::Plain, y);
}

void matmul_kernel(const Node &node, Inputs in, Outputs out) {
    if (in.size() < 2 || !in[0] || !in[1] || in[0]->shape.size() < 2 || in[1]->shape.size() < 2)
        throw KernelError(node, "takes operands of rank 2 or more");
    const Tensor &a = *in[0], &b = *in[1];
    const std::int64_t m = a.shape[a.shape.size() - 2], k = a.shape.back(), n = b.shape.back();
    if (b.shape[b.shape.size() - 2] != k)
        throw KernelError(node, a.shape_string() + " and " + b.shape_string() + " do not multiply");
    if (m * k == 0 || k * n == 0)
        throw KernelError(node, "empty operands");
    const std::int64_t batch_a = std::int64_t(a.element_count()) / (m * k);
    const std::int64_t batch_b = std::int64_t(b.element_count()) / (k * n);
    if (batch_a != batch_b && batch_b != 1 && batch_a != 1)
        throw KernelError(node, "batches of " + a.shape_string() + " and " + b.shape_string() +
                                    " differ");
    std::vector<std::int64_t> shape = a.shape.size() >= b.shape.size() ? a.shape : b.shape;
    shape[shape.size() - 2] = m;
    shape.back() = n;
    const std::vector<float> av = floats(node, &a, "A"), bv = floats(node, &b, "B");
    const std::int64_t batch = std::max(batch_a, batch_b);
    std::vector<float> y(std::size_t(batch * m * n));
    for (std::int64_t t = 0; t < batch; ++t) {
        const std::size_t ao = std::size_t((batch_a == 1 ? 0 : t) * m * k);
        const std::size_t bo = std::size_t((batch_b == 1 ? 0 : t) * k * n);
        for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = 0; j < n; ++j) {
                float acc = 0;
                for (std::int64_t p = 0; p < k; ++p)
                    acc += av[ao + std::size_t(i * k + p)] * bv[bo + std::size_t(p * n + j)];
                y[std::size_t((t * m + i) * n + j)] = acc;
            }
    }
    write(*out[0], a.dtype, shape, Layout::Plain, y);
}

void softmax_kernel(const Node &node, Inputs in, Outputs out) {
    const Tensor &x = input(node, in, 0);
    require_plain(node, x);
    const std::size_t axis = normalise_axis(node, node.get_int("axis", -1), x.shape.size());
    std::uint64_t outer = 1, inner = 1;
    for (std::size_t i = 0; i < x.shape.size(); ++i)
        i<axis ? outer *= std::uint64_t(x.shape[i]) : i> axis ? inner *= std::uint64_t(x.shape[i])
                                                              : 0;
    const std::uint64_t len = std::uint64_t(x.shape[axis]);
    const bool log = node.op == "LogSoftmax";
    std::vector<float> v = floats(node, &x, "input");
    for (std::uint64_t o = 0; o < outer; ++o)
        for (std::uint64_t i = 0; i < inner; ++i) {
            auto at = [&](std::uint64_t j) -> float & { return v[(o * len + j) * inner + i]; };
            float top = -std::numeric_limits<float>::infinity();
            for (std::uint64_t j = 0; j < len; ++j)
                top = std::max(top, at(j));
            float sum = 0;
            for (std::uint64_t j = 0; j < len; ++j)
                sum += std::exp(at(j) - top);
            for (std::uint64_t j = 0; j < len; ++j)
                at(j) = log ? at(j) - top - std::log(sum) : std::exp(at(j) - top) / sum;
        }
    write(*out[0], x.dtype, x.shape, Layout::Plain, v);
}

} // namespace

void add_nn_kernels(KernelTable &table) {
    table["Conv"] = conv_kernel;
    table["MaxPool"] = pool_kernel;
    table["AveragePool"] = pool_kernel;
    table["GlobalAveragePool"] = global_pool_kernel;
    table["GlobalMaxPool"] = global_pool_kernel;
    table["Gemm"] = gemm_kernel;
    table["MatMul"] = matmul_kernel;
    table["Softmax"] = softmax_kernel;
    table["LogSoftmax"] = softmax_kernel;
}

} // namespace tpumodel::cpu
