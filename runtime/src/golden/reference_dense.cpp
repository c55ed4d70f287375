// SPDX-License-Identifier: MIT
// reference_dense.cpp - the CPU golden model of a dense layer (see reference_dense.hpp).
#include "tpurt/golden/reference_dense.hpp"

#include "tpurt/error.hpp"
#include "tpurt/golden/reference.hpp"
#include "tpurt/golden/reference_fp32.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>

namespace tpurt {

namespace {

template <typename T> std::vector<T> copy_of(std::span<const std::byte> bytes, std::size_t count) {
    std::vector<T> out(count);
    std::memcpy(out.data(), bytes.data(), count * sizeof(T));
    return out;
}

// A x W as the fp32 values ACTIVATE starts from.
std::vector<float> accumulators(const DenseLayer &l, std::span<const std::byte> a,
                                std::span<const std::byte> w) {
    const std::size_t a_count = std::size_t{l.m} * l.k, w_count = std::size_t{l.k} * l.n;
    std::vector<float> acc(std::size_t{l.m} * l.n);
    switch (l.in_type) {
    case DType::Int8: {
        std::vector<std::int32_t> c(acc.size());
        reference_matmul(std::span<const std::int8_t>(copy_of<std::int8_t>(a, a_count)),
                         std::span<const std::int8_t>(copy_of<std::int8_t>(w, w_count)),
                         std::span<std::int32_t>(c), l.m, l.k, l.n);
        std::transform(c.begin(), c.end(), acc.begin(),
                       [](std::int32_t v) { return static_cast<float>(v); });
        break;
    }
    case DType::Bf16:
        reference_matmul(std::span<const Bf16>(copy_of<Bf16>(a, a_count)),
                         std::span<const Bf16>(copy_of<Bf16>(w, w_count)), std::span<float>(acc),
                         l.m, l.k, l.n);
        break;
    default:
        reference_matmul(std::span<const float>(copy_of<float>(a, a_count)),
                         std::span<const float>(copy_of<float>(w, w_count)), std::span<float>(acc),
                         l.m, l.k, l.n);
        break;
    }
    return acc;
}

float activation(Activation f, float x) {
    if (std::isnan(x) || f == Activation::None)
        return x;
    const float relu = x > 0.0f ? x : 0.0f;
    return f == Activation::Relu ? relu : std::min(relu, 6.0f);
}

void append(std::vector<std::byte> &out, const void *value, std::size_t size) {
    const auto *bytes = static_cast<const std::byte *>(value);
    out.insert(out.end(), bytes, bytes + size);
}

void convert(float x, DType type, std::vector<std::byte> &out) {
    switch (type) {
    case DType::Int8: {
        const auto v = static_cast<std::int8_t>(
            std::isnan(x) ? 0.0 : std::clamp(std::nearbyint(double{x}), -128.0, 127.0));
        append(out, &v, 1);
        break;
    }
    case DType::Int32: {
        const auto v = static_cast<std::int32_t>(
            std::isnan(x) ? 0.0
                          : std::clamp(std::nearbyint(double{x}), -2147483648.0, 2147483647.0));
        append(out, &v, 4);
        break;
    }
    case DType::Bf16: {
        const Bf16 v = std::isnan(x) ? Bf16{0x7fc0} : Bf16::from_float(x);
        append(out, &v, 2);
        break;
    }
    default: {
        const float v = std::isnan(x) ? std::bit_cast<float>(0x7fc00000u) : x;
        append(out, &v, 4);
        break;
    }
    }
}

} // namespace

std::vector<std::byte> reference_epilogue(std::span<const float> acc, std::size_t n,
                                          std::span<const float> bias, Activation function,
                                          float scale, DType out_type) {
    if (function != Activation::None && function != Activation::Relu &&
        function != Activation::Relu6)
        throw Error(ErrorCode::InvalidArgument,
                    std::string("reference epilogue: no exact model of ") +
                        activation_name(function));
    if (n == 0 || (!bias.empty() && bias.size() < n))
        throw Error(ErrorCode::InvalidArgument, "reference epilogue: bias too small");
    std::vector<std::byte> out;
    out.reserve(acc.size() * element_size(out_type));
    for (std::size_t i = 0; i < acc.size(); ++i) {
        float v = acc[i];
        if (!bias.empty())
            v = v + bias[i % n];
        v = v * scale;
        convert(activation(function, v), out_type, out);
    }
    return out;
}

std::vector<std::byte> reference_dense(const DenseLayer &layer, std::span<const std::byte> a,
                                       std::span<const std::byte> w, std::span<const float> bias) {
    const std::size_t elem = element_size(layer.in_type);
    if (a.size() < std::size_t{layer.m} * layer.k * elem ||
        w.size() < std::size_t{layer.k} * layer.n * elem ||
        (!bias.empty() && bias.size() < layer.n))
        throw Error(ErrorCode::InvalidArgument, "reference_dense: arrays too small");
    return reference_epilogue(accumulators(layer, a, w), layer.n, bias, layer.activation,
                              layer.scale, layer.out_type);
}

} // namespace tpurt
