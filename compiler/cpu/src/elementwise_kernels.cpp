// SPDX-License-Identifier: MIT
// elementwise_kernels.cpp - the reference kernels of elementwise math: Add, Sub, Mul, Div, Pow,
// Max and Min of two inputs with numpy broadcasting (integers in int64, floats in binary32;
// Pow's exponent of any type), Expand (any dtype), Clip, Round (half to even),
// and the unary functions Relu, Sigmoid, Tanh, Exp, Log, Sqrt, Erf, Neg, Abs, Reciprocal
// (binary32; Neg and Abs also on integers; any layout).
#include "kernel_support.hpp"

#include <cmath>
#include <cstring>

namespace tpumodel::cpu {

namespace {

using Inputs = std::span<const Tensor *const>;
using Outputs = std::span<Tensor *const>;

bool is_float(DType t) {
    return t == DType::Float || t == DType::Bfloat16;
}

// The index into an input of `shape` (right-aligned, broadcast) for output position `pos`.
std::uint64_t broadcast_index(const std::vector<std::int64_t> &shape,
                              const std::vector<std::int64_t> &pos) {
    std::uint64_t index = 0;
    const std::size_t skip = pos.size() - shape.size();
    for (std::size_t i = 0; i < shape.size(); ++i)
        index =
            index * std::uint64_t(shape[i]) + (shape[i] == 1 ? 0 : std::uint64_t(pos[skip + i]));
    return index;
}

std::string shape_text(const std::vector<std::int64_t> &shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

// The numpy broadcast of shapes a and b; refused when they do not broadcast.
std::vector<std::int64_t> broadcast_shape(const Node &node, const std::vector<std::int64_t> &a,
                                          const std::vector<std::int64_t> &b) {
    const std::size_t rank = std::max(a.size(), b.size());
    std::vector<std::int64_t> shape(rank);
    for (std::size_t i = 0; i < rank; ++i) {
        const std::int64_t da = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
        const std::int64_t db = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
        if (da != db && da != 1 && db != 1)
            throw KernelError(node, "cannot broadcast " + shape_text(a) + " with " + shape_text(b));
        shape[i] = da == 1 ? db : da;
    }
    return shape;
}

// Advances `pos` to the next position of `shape` in row-major order.
void next_position(std::vector<std::int64_t> &pos, const std::vector<std::int64_t> &shape) {
    for (std::size_t i = shape.size(); i-- > 0;) {
        if (++pos[i] < shape[i])
            break;
        pos[i] = 0;
    }
}

template <char Op> void binary_kernel(const Node &node, Inputs in, Outputs out) {
    if (in.size() != 2 || !in[0] || !in[1])
        throw KernelError(node, "needs two inputs");
    const Tensor &a = *in[0], &b = *in[1];
    if (a.dtype != b.dtype && Op != '^') // Pow's exponent may be of another type
        throw KernelError(node, std::string("its inputs are ") + dtype_name(a.dtype) + " and " +
                                    dtype_name(b.dtype));
    if (a.layout != b.layout && a.element_count() != 1 && b.element_count() != 1)
        throw KernelError(node, "its inputs are in different layouts");
    const std::vector<std::int64_t> shape = broadcast_shape(node, a.shape, b.shape);
    const std::size_t rank = shape.size();
    Tensor &y = *out[0];
    shape_output(y, a.dtype, shape);
    y.layout = a.element_count() == 1 ? b.layout : a.layout;
    std::vector<std::int64_t> pos(rank, 0);
    for (std::uint64_t o = 0; o < y.element_count(); ++o) {
        const std::uint64_t ia = broadcast_index(a.shape, pos), ib = broadcast_index(b.shape, pos);
        if (is_float(a.dtype)) {
            const auto x = float(real_at(a, ia)), z = float(real_at(b, ib));
            const bool nan = std::isnan(x) || std::isnan(z); // Max and Min propagate NaN
            const float r = Op == '+'   ? x + z
                            : Op == '-' ? x - z
                            : Op == '*' ? x * z
                            : Op == '^' ? std::pow(x, z)
                            : Op == 'M' ? (nan ? NAN : std::max(x, z))
                            : Op == 'm' ? (nan ? NAN : std::min(x, z))
                                        : x / z;
            store(y, o, r, 0);
        } else if (Op == '^') {
            const auto r = std::int64_t(std::pow(real_at(a, ia), real_at(b, ib)));
            store(y, o, double(r), r);
        } else {
            const std::int64_t x = int_at(a, ia), z = int_at(b, ib);
            if (Op == '/' && z == 0)
                throw KernelError(node, "integer division by zero");
            const std::int64_t r = Op == '+'   ? x + z
                                   : Op == '-' ? x - z
                                   : Op == '*' ? x * z
                                   : Op == 'M' ? std::max(x, z)
                                   : Op == 'm' ? std::min(x, z)
                                               : x / z;
            store(y, o, double(r), r);
        }
        next_position(pos, shape);
    }
}

// Expand: x broadcast with the shape input (numpy's rule, so the result may be larger than it),
// elements copied as they are.
void expand_kernel(const Node &node, Inputs in, Outputs out) {
    const Tensor &x = input(node, in, 0);
    require_plain(node, x);
    const std::vector<std::int64_t> target =
        ints_of(node, in.size() > 1 ? in[1] : nullptr, "shape");
    for (std::int64_t d : target)
        if (d < 0)
            throw KernelError(node, "the shape has a negative entry");
    const std::vector<std::int64_t> shape = broadcast_shape(node, x.shape, target);
    Tensor &y = *out[0];
    shape_output(y, x.dtype, shape);
    const std::size_t size = dtype_size(x.dtype);
    std::vector<std::int64_t> pos(shape.size(), 0);
    for (std::uint64_t o = 0; o < y.element_count(); ++o) {
        std::memcpy(y.data.data() + o * size, x.data.data() + broadcast_index(x.shape, pos) * size,
                    size);
        next_position(pos, shape);
    }
}

// Clip: x limited to [min, max], each bound an optional one-element input.
void clip_kernel(const Node &node, Inputs in, Outputs out) {
    const Tensor &x = input(node, in, 0);
    if (x.dtype == DType::Bool)
        throw KernelError(node, "takes numbers, not bool");
    const Tensor *bound[2] = {in.size() > 1 ? in[1] : nullptr, in.size() > 2 ? in[2] : nullptr};
    for (const Tensor *b : bound)
        if (b && (b->element_count() != 1 || b->dtype != x.dtype))
            throw KernelError(node, "its bounds must be one value of its input's dtype");
    Tensor &y = *out[0];
    shape_output(y, x.dtype, x.shape);
    y.layout = x.layout;
    for (std::uint64_t i = 0; i < x.element_count(); ++i) {
        if (is_float(x.dtype)) {
            float v = float(real_at(x, i));
            if (bound[0] && v < float(real_at(*bound[0], 0)))
                v = float(real_at(*bound[0], 0));
            if (bound[1] && v > float(real_at(*bound[1], 0)))
                v = float(real_at(*bound[1], 0));
            store(y, i, v, 0);
        } else {
            std::int64_t v = int_at(x, i);
            if (bound[0])
                v = std::max(v, int_at(*bound[0], 0));
            if (bound[1])
                v = std::min(v, int_at(*bound[1], 0));
            store(y, i, double(v), v);
        }
    }
}

template <float (*F)(float)> void unary_kernel(const Node &node, Inputs in, Outputs out) {
    if (in.empty() || !in[0])
        throw KernelError(node, "its input is missing");
    const Tensor &x = *in[0];
    if (!is_float(x.dtype))
        throw KernelError(node, std::string("takes floats, not ") + dtype_name(x.dtype));
    Tensor &y = *out[0];
    shape_output(y, x.dtype, x.shape);
    y.layout = x.layout;
    for (std::uint64_t i = 0; i < x.element_count(); ++i)
        store(y, i, F(float(real_at(x, i))), 0);
}

// Neg and Abs take integers too (shape arithmetic: LayerNormalization's function body negates
// a negative axis to count the normalised axes).
template <bool Negate> void sign_kernel(const Node &node, Inputs in, Outputs out) {
    if (in.empty() || !in[0])
        throw KernelError(node, "its input is missing");
    const Tensor &x = *in[0];
    if (x.dtype == DType::Bool)
        throw KernelError(node, "takes numbers, not bool");
    Tensor &y = *out[0];
    shape_output(y, x.dtype, x.shape);
    y.layout = x.layout;
    for (std::uint64_t i = 0; i < x.element_count(); ++i) {
        if (is_float(x.dtype)) {
            const auto v = float(real_at(x, i));
            store(y, i, Negate ? -v : std::fabs(v), 0);
        } else {
            const std::int64_t v = int_at(x, i);
            const std::int64_t r = Negate || v < 0 ? -v : v;
            store(y, i, double(r), r);
        }
    }
}

float round_(float x) {
    return std::nearbyint(x); // the default mode: to nearest, ties to even, as ONNX's Round
}
float relu(float x) {
    return x > 0 ? x : 0.0f;
}
float sigmoid(float x) {
    return 1.0f / (1.0f + std::exp(-x));
}
float tanh_(float x) {
    return std::tanh(x);
}
float exp_(float x) {
    return std::exp(x);
}
float log_(float x) {
    return std::log(x);
}
float sqrt_(float x) {
    return std::sqrt(x);
}
float erf_(float x) {
    return std::erf(x);
}
float reciprocal(float x) {
    return 1.0f / x;
}

} // namespace

void add_elementwise_kernels(KernelTable &table) {
    table["Add"] = binary_kernel<'+'>;
    table["Sub"] = binary_kernel<'-'>;
    table["Mul"] = binary_kernel<'*'>;
    table["Div"] = binary_kernel<'/'>;
    table["Pow"] = binary_kernel<'^'>;
    table["Max"] = binary_kernel<'M'>;
    table["Min"] = binary_kernel<'m'>;
    table["Expand"] = expand_kernel;
    table["Clip"] = clip_kernel;
    table["Round"] = unary_kernel<round_>;
    table["Relu"] = unary_kernel<relu>;
    table["Sigmoid"] = unary_kernel<sigmoid>;
    table["Tanh"] = unary_kernel<tanh_>;
    table["Exp"] = unary_kernel<exp_>;
    table["Log"] = unary_kernel<log_>;
    table["Sqrt"] = unary_kernel<sqrt_>;
    table["Erf"] = unary_kernel<erf_>;
    table["Neg"] = sign_kernel<true>;
    table["Abs"] = sign_kernel<false>;
    table["Reciprocal"] = unary_kernel<reciprocal>;
}

} // namespace tpumodel::cpu
