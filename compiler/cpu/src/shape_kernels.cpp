// SPDX-License-Identifier: MIT
// shape_kernels.cpp - the reference kernels that move elements without arithmetic: Shape, Size,
// Reshape, Flatten, Squeeze, Unsqueeze, Identity, Concat, Gather, Slice, Transpose, Cast,
// ConstantOfShape (the shape arithmetic PyTorch exports is made of these and elementwise
// integer math).
#include "kernel_support.hpp"
#include "tpumodel/slicing.hpp"

#include <algorithm>
#include <numeric>

namespace tpumodel::cpu {

namespace {

using Inputs = std::span<const Tensor *const>;
using Outputs = std::span<Tensor *const>;

const Tensor &first(const Node &node, Inputs in) {
    if (in.empty() || !in[0])
        throw KernelError(node, "its data input is missing");
    return *in[0];
}

// The output is the input's elements in the same order under another shape.
// Flatten and Reshape also take an NHWC image: they read it in its stored H, W, C order (the
// compiler permuted the weights that follow to match) and give a plain tensor.
void relabel(const Node &node, Inputs in, Outputs out, std::vector<std::int64_t> shape) {
    const Tensor &x = first(node, in);
    if (!(x.layout == Layout::Nhwc && (node.op == "Flatten" || node.op == "Reshape")))
        require_plain(node, x);
    Tensor &y = *out[0];
    y.dtype = x.dtype;
    y.layout = Layout::Plain;
    y.shape = std::move(shape);
    if (y.element_count() != x.element_count())
        throw KernelError(node, "cannot reshape " + x.shape_string() + " to " + y.shape_string());
    y.data = x.data;
}

void shape_kernel(const Node &node, Inputs in, Outputs out) {
    const Tensor &x = first(node, in);
    require_plain(node, x);
    const auto rank = std::int64_t(x.shape.size());
    auto clamp = [&](std::int64_t a) {
        return std::clamp(a < 0 ? a + rank : a, std::int64_t(0), rank);
    };
    const std::int64_t start = clamp(node.get_int("start", 0)),
                       end = clamp(node.get_int("end", rank));
    const std::int64_t n = std::max<std::int64_t>(end - start, 0);
    shape_output(*out[0], DType::Int64, {n});
    for (std::int64_t i = 0; i < n; ++i)
        store(*out[0], std::uint64_t(i), 0, x.shape[std::size_t(start + i)]);
}

void size_kernel(const Node &node, Inputs in, Outputs out) {
    const Tensor &x = first(node, in);
    shape_output(*out[0], DType::Int64, {});
    store(*out[0], 0, 0, std::int64_t(x.element_count()));
}

void reshape_kernel(const Node &node, Inputs in, Outputs out) {
    const Tensor &x = first(node, in);
    std::vector<std::int64_t> shape = ints_of(node, in.size() > 1 ? in[1] : nullptr, "shape");
    const bool allow_zero = node.get_int("allowzero", 0) != 0;
    std::int64_t known = 1;
    std::size_t infer = shape.size();
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] == 0 && !allow_zero) {
            if (i >= x.shape.size())
                throw KernelError(node, "shape entry 0 at " + std::to_string(i) +
                                            " copies a dimension the input does not have");
            shape[i] = x.shape[i];
        }
        if (shape[i] == -1) {
            if (infer != shape.size())
                throw KernelError(node, "the shape has more than one -1");
            infer = i;
        } else if (shape[i] < 0) {
            throw KernelError(node, "the shape has a negative entry " + std::to_string(shape[i]));
        } else {
            known *= shape[i];
        }
    }
    if (infer != shape.size())
        shape[infer] = known == 0 ? 0 : std::int64_t(x.element_count()) / known;
    relabel(node, in, out, shape);
}

void flatten_kernel(const Node &node, Inputs in, Outputs out) {
    const Tensor &x = first(node, in);
    const std::int64_t a = node.get_int("axis", 1);
    const std::size_t axis = a == std::int64_t(x.shape.size())
                                 ? x.shape.size()
                                 : normalise_axis(node, a, x.shape.size());
    std::int64_t outer = 1, inner = 1;
    for (std::size_t i = 0; i < x.shape.size(); ++i)
        (i < axis ? outer : inner) *= x.shape[i];
    relabel(node, in, out, {outer, inner});
}

void squeeze_kernel(const Node &node, Inputs in, Outputs out) {
    const Tensor &x = first(node, in);
    std::vector<bool> drop(x.shape.size(), false);
    if (in.size() > 1 && in[1]) {
        for (std::int64_t a : ints_of(node, in[1], "axes")) {
            const std::size_t axis = normalise_axis(node, a, x.shape.size());
            if (x.shape[axis] != 1)
                throw KernelError(node, "cannot squeeze axis " + std::to_string(a) + " of " +
                                            x.shape_string());
            drop[axis] = true;
        }
    } else {
        for (std::size_t i = 0; i < x.shape.size(); ++i)
            drop[i] = x.shape[i] == 1;
    }
    std::vector<std::int64_t> shape;
    for (std::size_t i = 0; i < x.shape.size(); ++i)
        if (!drop[i])
            shape.push_back(x.shape[i]);
    relabel(node, in, out, shape);
}

void unsqueeze_kernel(const Node &node, Inputs in, Outputs out) {
    const Tensor &x = first(node, in);
    const std::vector<std::int64_t> axes = ints_of(node, in.size() > 1 ? in[1] : nullptr, "axes");
    const std::size_t rank = x.shape.size() + axes.size();
    std::vector<bool> added(rank, false);
    for (std::int64_t a : axes) {
        const std::size_t axis = normalise_axis(node, a, rank);
        if (added[axis])
            throw KernelError(node, "axis " + std::to_string(a) + " is given twice");
        added[axis] = true;
    }
    std::vector<std::int64_t> shape;
    std::size_t next = 0;
    for (std::size_t i = 0; i < rank; ++i)
        shape.push_back(added[i] ? 1 : x.shape[next++]);
    relabel(node, in, out, shape);
}

void identity_kernel(const Node &node, Inputs in, Outputs out) {
    const Tensor &x = first(node, in);
    *out[0] = Tensor{out[0]->name, x.dtype, x.layout, x.shape, false, x.data};
}

// Copies `outer` blocks: block o of `from` (`block` bytes at o * `stride`) to `to` at `at`.
// An empty input copies nothing (its data may be no memory at all).
void copy_blocks(const Tensor &from, Tensor &to, std::uint64_t outer, std::uint64_t block,
                 std::uint64_t out_stride, std::uint64_t at) {
    if (block == 0)
        return;
    for (std::uint64_t o = 0; o < outer; ++o)
        std::memcpy(to.data.data() + o * out_stride + at, from.data.data() + o * block, block);
}

void concat_kernel(const Node &node, Inputs in, Outputs out) {
    const Tensor &x = first(node, in);
    const std::size_t axis = normalise_axis(node, node.get_int("axis", 0), x.shape.size());
    std::vector<std::int64_t> shape = x.shape;
    shape[axis] = 0;
    for (const Tensor *t : in) {
        if (!t || t->dtype != x.dtype || t->shape.size() != x.shape.size())
            throw KernelError(node, "its inputs differ in dtype or rank");
        require_plain(node, *t);
        for (std::size_t i = 0; i < shape.size(); ++i)
            if (i != axis && t->shape[i] != x.shape[i])
                throw KernelError(node, "input '" + t->name + "' " + t->shape_string() +
                                            " does not match " + x.shape_string());
        shape[axis] += t->shape[axis];
    }
    Tensor &y = *out[0];
    shape_output(y, x.dtype, shape);
    std::uint64_t outer = 1, inner = dtype_size(x.dtype);
    for (std::size_t i = 0; i < shape.size(); ++i)
        i<axis ? outer *= std::uint64_t(shape[i]) : i> axis ? inner *= std::uint64_t(shape[i]) : 0;
    std::uint64_t at = 0;
    for (const Tensor *t : in) {
        const std::uint64_t block = inner * std::uint64_t(t->shape[axis]);
        copy_blocks(*t, y, outer, block, inner * std::uint64_t(shape[axis]), at);
        at += block;
    }
}

void gather_kernel(const Node &node, Inputs in, Outputs out) {
    const Tensor &x = first(node, in);
    require_plain(node, x);
    const std::vector<std::int64_t> idx = ints_of(node, in.size() > 1 ? in[1] : nullptr, "indices");
    const std::size_t axis = normalise_axis(node, node.get_int("axis", 0), x.shape.size());
    std::vector<std::int64_t> shape(x.shape.begin(), x.shape.begin() + std::ptrdiff_t(axis));
    shape.insert(shape.end(), in[1]->shape.begin(), in[1]->shape.end());
    shape.insert(shape.end(), x.shape.begin() + std::ptrdiff_t(axis) + 1, x.shape.end());
    Tensor &y = *out[0];
    shape_output(y, x.dtype, shape);
    std::uint64_t outer = 1, inner = dtype_size(x.dtype);
    for (std::size_t i = 0; i < x.shape.size(); ++i)
        i<axis ? outer *= std::uint64_t(x.shape[i]) : i> axis ? inner *= std::uint64_t(x.shape[i])
                                                              : 0;
    const std::int64_t n = x.shape[axis];
    for (std::uint64_t o = 0; o < outer; ++o)
        for (std::size_t j = 0; j < idx.size(); ++j) {
            const std::int64_t k = idx[j] < 0 ? idx[j] + n : idx[j];
            if (k < 0 || k >= n)
                throw KernelError(node, "index " + std::to_string(idx[j]) +
                                            " is out of range for a dimension of " +
                                            std::to_string(n));
            std::memcpy(y.data.data() + (o * idx.size() + j) * inner,
                        x.data.data() + (o * std::uint64_t(n) + std::uint64_t(k)) * inner, inner);
        }
}

// Permutes the stored axes, whatever the layout: the compiler's NCHW <-> NHWC conversions.
void transpose_kernel(const Node &node, Inputs in, Outputs out) {
    const Tensor &x = first(node, in);
    const std::size_t rank = x.shape.size();
    std::vector<std::int64_t> perm = node.get_ints("perm", {});
    if (perm.empty())
        for (std::size_t i = 0; i < rank; ++i)
            perm.push_back(std::int64_t(rank - 1 - i));
    std::vector<std::int64_t> sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::int64_t> iota(rank);
    std::iota(iota.begin(), iota.end(), 0);
    if (sorted != iota)
        throw KernelError(node, "perm is not a permutation of the input's axes");
    std::vector<std::int64_t> shape(rank);
    for (std::size_t i = 0; i < rank; ++i)
        shape[i] = x.shape[std::size_t(perm[i])];
    Tensor &y = *out[0];
    shape_output(y, x.dtype, shape);
    std::vector<std::uint64_t> in_stride(rank, 1);
    for (std::size_t i = rank; i-- > 1;)
        in_stride[i - 1] = in_stride[i] * std::uint64_t(x.shape[i]);
    const std::size_t size = dtype_size(x.dtype);
    std::vector<std::int64_t> pos(rank, 0);
    for (std::uint64_t o = 0; o < y.element_count(); ++o) {
        std::uint64_t src = 0;
        for (std::size_t i = 0; i < rank; ++i)
            src += std::uint64_t(pos[i]) * in_stride[std::size_t(perm[i])];
        std::memcpy(y.data.data() + o * size, x.data.data() + src * size, size);
        for (std::size_t i = rank; i-- > 0;) {
            if (++pos[i] < shape[i])
                break;
            pos[i] = 0;
        }
    }
}

void cast_kernel(const Node &node, Inputs in, Outputs out) {
    const Tensor &x = first(node, in);
    const std::int64_t to = node.get_int("to", 0);
    if (to < 0 || to > 255 || !dtype_known(std::uint8_t(to)))
        throw KernelError(node, "cannot cast to ONNX dtype " + std::to_string(to));
    Tensor &y = *out[0];
    shape_output(y, DType(to), x.shape);
    y.layout = x.layout;
    for (std::uint64_t i = 0; i < x.element_count(); ++i)
        store(y, i, real_at(x, i), int_at(x, i));
}

// Slice (opset 13): the span slice_span() gives, element by element.
void slice_kernel(const Node &node, Inputs in, Outputs out) {
    const Tensor &x = first(node, in);
    require_plain(node, x);
    const std::size_t rank = x.shape.size();
    const auto input = [&](std::size_t i) { return in.size() > i ? in[i] : nullptr; };
    const SliceSpan span = slice_span(node, x.shape, input(1), input(2), input(3), input(4));
    const std::vector<std::int64_t> &first_index = span.first, &step = span.step,
                                    &shape = span.shape;
    Tensor &y = *out[0];
    shape_output(y, x.dtype, shape);
    std::vector<std::uint64_t> stride(rank, 1);
    for (std::size_t i = rank; i-- > 1;)
        stride[i - 1] = stride[i] * std::uint64_t(x.shape[i]);
    const std::size_t size = dtype_size(x.dtype);
    std::vector<std::int64_t> pos(rank, 0);
    for (std::uint64_t o = 0; o < y.element_count(); ++o) {
        std::uint64_t src = 0;
        for (std::size_t i = 0; i < rank; ++i)
            src += std::uint64_t(first_index[i] + pos[i] * step[i]) * stride[i];
        std::memcpy(y.data.data() + o * size, x.data.data() + src * size, size);
        for (std::size_t i = rank; i-- > 0;) {
            if (++pos[i] < shape[i])
                break;
            pos[i] = 0;
        }
    }
}

// A tensor of the shape in input 0 filled with "value" (float32 0 by default; "dtype" as the
// compiler writes ConstantOfShape's value tensor).
void constant_of_shape_kernel(const Node &node, Inputs in, Outputs out) {
    const std::vector<std::int64_t> shape = ints_of(node, in.empty() ? nullptr : in[0], "shape");
    for (std::int64_t d : shape)
        if (d < 0)
            throw KernelError(node, "the shape has a negative entry");
    const std::int64_t dtype = node.get_int("dtype", std::int64_t(DType::Float));
    if (dtype < 0 || dtype > 255 || !dtype_known(std::uint8_t(dtype)))
        throw KernelError(node, "unknown dtype " + std::to_string(dtype));
    Tensor &y = *out[0];
    shape_output(y, DType(dtype), shape);
    const double real = node.get_float("value", 0.0f);
    const std::int64_t integer = node.get_int("value", 0);
    const bool is_float = DType(dtype) == DType::Float || DType(dtype) == DType::Bfloat16;
    for (std::uint64_t i = 0; i < y.element_count(); ++i)
        store(y, i, is_float ? real : double(integer), integer);
}

} // namespace

void add_shape_kernels(KernelTable &table) {
    table["Shape"] = shape_kernel;
    table["Size"] = size_kernel;
    table["Reshape"] = reshape_kernel;
    table["Flatten"] = flatten_kernel;
    table["Squeeze"] = squeeze_kernel;
    table["Unsqueeze"] = unsqueeze_kernel;
    table["Identity"] = identity_kernel;
    table["Concat"] = concat_kernel;
    table["Gather"] = gather_kernel;
    table["Transpose"] = transpose_kernel;
    table["Cast"] = cast_kernel;
    table["ConstantOfShape"] = constant_of_shape_kernel;
    table["Slice"] = slice_kernel;
}

} // namespace tpumodel::cpu
