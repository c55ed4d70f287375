// SPDX-License-Identifier: MIT
// kernels.cpp - the kernel table by ONNX op name, and the helpers every kernel shares.
#include "kernel_support.hpp"

#include <cmath>

namespace tpumodel::cpu {

namespace {

const KernelTable &table() {
    static const KernelTable t = [] {
        KernelTable k;
        add_shape_kernels(k);
        add_elementwise_kernels(k);
        add_nn_kernels(k);
        add_reduce_kernels(k);
        add_norm_kernels(k);
        add_quant_kernels(k);
        return k;
    }();
    return t;
}

template <typename T> T load(const Tensor &t, std::uint64_t i) {
    T v;
    std::memcpy(&v, t.data.data() + i * sizeof(T), sizeof(T));
    return v;
}

template <typename T> void put(Tensor &t, std::uint64_t i, T v) {
    std::memcpy(t.data.data() + i * sizeof(T), &v, sizeof(T));
}

float from_bf16(std::uint16_t b) {
    const std::uint32_t bits = std::uint32_t(b) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

std::uint16_t to_bf16(float f) {
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if (std::isnan(f))
        return std::uint16_t((bits >> 16) | 0x40);
    bits += 0x7fff + ((bits >> 16) & 1);
    return std::uint16_t(bits >> 16);
}

} // namespace

Kernel find_kernel(const std::string &op) {
    const auto it = table().find(op);
    return it == table().end() ? nullptr : it->second;
}

std::int64_t int_at(const Tensor &t, std::uint64_t i) {
    switch (t.dtype) {
    case DType::Int64:
        return load<std::int64_t>(t, i);
    case DType::Int32:
        return load<std::int32_t>(t, i);
    case DType::Int8:
        return load<std::int8_t>(t, i);
    case DType::Uint8:
    case DType::Bool:
        return load<std::uint8_t>(t, i);
    case DType::Float:
    case DType::Bfloat16:
        return std::int64_t(real_at(t, i));
    }
    return 0;
}

double real_at(const Tensor &t, std::uint64_t i) {
    switch (t.dtype) {
    case DType::Float:
        return load<float>(t, i);
    case DType::Bfloat16:
        return from_bf16(load<std::uint16_t>(t, i));
    default:
        return double(int_at(t, i));
    }
}

void store(Tensor &t, std::uint64_t i, double v, std::int64_t iv) {
    switch (t.dtype) {
    case DType::Float:
        return put<float>(t, i, float(v));
    case DType::Bfloat16:
        return put<std::uint16_t>(t, i, to_bf16(float(v)));
    case DType::Int64:
        return put<std::int64_t>(t, i, iv);
    case DType::Int32:
        return put<std::int32_t>(t, i, std::int32_t(iv));
    case DType::Int8:
        return put<std::int8_t>(t, i, std::int8_t(iv));
    case DType::Uint8:
        return put<std::uint8_t>(t, i, std::uint8_t(iv));
    case DType::Bool:
        return put<std::uint8_t>(t, i, iv != 0);
    }
}

std::vector<std::int64_t> ints_of(const Node &node, const Tensor *t, const char *what) {
    if (!t)
        throw KernelError(node, std::string("its ") + what + " is missing");
    if (t->dtype != DType::Int64 && t->dtype != DType::Int32)
        throw KernelError(node, std::string("its ") + what + " is " + dtype_name(t->dtype) +
                                    ", not an integer tensor");
    std::vector<std::int64_t> v(t->element_count());
    for (std::uint64_t i = 0; i < v.size(); ++i)
        v[i] = int_at(*t, i);
    return v;
}

std::size_t normalise_axis(const Node &node, std::int64_t axis, std::size_t rank) {
    const auto r = std::int64_t(rank);
    if (axis < -r || axis >= r)
        throw KernelError(node, "axis " + std::to_string(axis) + " is out of range for rank " +
                                    std::to_string(rank));
    return std::size_t(axis < 0 ? axis + r : axis);
}

const Tensor &input(const Node &node, std::span<const Tensor *const> in, std::size_t i) {
    if (i >= in.size() || !in[i])
        throw KernelError(node, "its input " + std::to_string(i) + " is missing");
    return *in[i];
}

void require_plain(const Node &node, const Tensor &t) {
    if (t.layout != Layout::Plain)
        throw KernelError(node, "tensor '" + t.name + "' is in the " + layout_name(t.layout) +
                                    " layout; this CPU kernel takes ONNX's order only");
}

void shape_output(Tensor &t, DType dtype, std::vector<std::int64_t> shape) {
    t.dtype = dtype;
    t.shape = std::move(shape);
    t.data.assign(t.element_count() * dtype_size(dtype), 0);
}

} // namespace tpumodel::cpu
