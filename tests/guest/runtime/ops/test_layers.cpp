// SPDX-License-Identifier: MIT
// test_layers.cpp - guest test: dense layers and convolutions through libtpurt on the real card
// (driver + device) equal the runtime's reference models exactly: dense int8 (requantised),
// bf16 and fp32 with bias and RELU / RELU6 / no activation into every output type; conv2d
// int8, bf16 and fp32 with strides, padding and a batch.
#include <tpurt/golden/reference_conv2d.hpp>
#include <tpurt/golden/reference_dense.hpp>
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/tpurt.hpp>

#include "runtime_helpers.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

namespace {

using tpurt::Activation;
using tpurt::DType;

using guest_test::device;

template <typename T> std::vector<std::byte> bytes_of(const std::vector<T> &values) {
    std::vector<std::byte> out(values.size() * sizeof(T));
    std::memcpy(out.data(), values.data(), out.size());
    return out;
}

std::vector<std::byte> random_matrix(DType type, std::size_t count, std::uint64_t seed) {
    switch (type) {
    case DType::Int8:
        return bytes_of(tpurt::random_int8(count, seed));
    case DType::Bf16:
        return bytes_of(tpurt::random_bf16(count, seed));
    default:
        return bytes_of(tpurt::random_fp32(count, seed));
    }
}

void check_dense(const tpurt::DenseLayer &l, std::uint64_t seed) {
    INFO(tpurt::dtype_name(l.in_type)
         << " -> " << tpurt::dtype_name(l.out_type) << " " << tpurt::activation_name(l.activation)
         << " " << l.m << "x" << l.k << "x" << l.n);
    const auto a = random_matrix(l.in_type, std::size_t{l.m} * l.k, seed);
    const auto w = random_matrix(l.in_type, std::size_t{l.k} * l.n, seed + 1);
    std::vector<float> bias = tpurt::random_fp32(l.n, seed + 2);
    for (float &b : bias)
        b *= l.in_type == DType::Int8 ? 4096.0f : 4.0f;
    std::vector<std::byte> card(std::size_t{l.m} * l.n * tpurt::element_size(l.out_type),
                                std::byte{0x5a});
    const tpurt::MatmulStats stats = tpurt::dense(device(), a, w, bias, card, l);
    CHECK(stats.macs == std::uint64_t{l.m} * l.k * l.n);
    CHECK(card == tpurt::reference_dense(l, a, w, bias));
}

template <typename In, typename Out>
void check_conv2d(const tpurt::Conv2dShape &s, const std::vector<In> &input,
                  const std::vector<In> &weights) {
    std::vector<Out> card(s.output_elements()), ref(card.size());
    const tpurt::MatmulStats stats =
        tpurt::conv2d(device(), std::span<const In>(input), std::span<const In>(weights),
                      std::span<Out>(card), s);
    tpurt::reference_conv2d(std::span<const In>(input), std::span<const In>(weights),
                            std::span<Out>(ref), s);
    // Stacked images also walk the output rows between them (conv2d.hpp): at least the
    // convolution's own MACs.
    CHECK(stats.macs >= std::uint64_t{s.batch} * s.out_height() * s.out_width() * s.kernel_h *
                            s.kernel_w * s.channels * s.filters);
    CHECK(std::memcmp(card.data(), ref.data(), card.size() * sizeof(Out)) == 0);
}

} // namespace

TEST_CASE("the card has a vector unit", "[dense]") {
    CHECK(device().info().has_vector_unit());
}

TEST_CASE("dense layers equal the reference exactly", "[dense]") {
    std::uint64_t seed = 1;
    for (const Activation f : {Activation::None, Activation::Relu, Activation::Relu6}) {
        check_dense({.m = 33,
                     .k = 200,
                     .n = 140,
                     .in_type = DType::Int8,
                     .out_type = DType::Int8,
                     .activation = f,
                     .scale = 1.0f / 2048},
                    seed++);
        check_dense({.m = 33,
                     .k = 200,
                     .n = 140,
                     .in_type = DType::Bf16,
                     .out_type = DType::Bf16,
                     .activation = f},
                    seed++);
        check_dense({.m = 33,
                     .k = 200,
                     .n = 140,
                     .in_type = DType::Fp32,
                     .out_type = DType::Fp32,
                     .activation = f,
                     .scale = 0.5f},
                    seed++);
    }
    check_dense({.m = 7,
                 .k = 9,
                 .n = 5,
                 .in_type = DType::Bf16,
                 .out_type = DType::Int8,
                 .activation = Activation::Relu,
                 .scale = 4.0f},
                seed++);
}

TEST_CASE("conv2d equals the direct convolution exactly", "[conv2d]") {
    const tpurt::Conv2dShape s{.batch = 2,
                               .height = 13,
                               .width = 11,
                               .channels = 6,
                               .kernel_h = 3,
                               .kernel_w = 3,
                               .filters = 9,
                               .stride_h = 2,
                               .stride_w = 1,
                               .pad_h = 1,
                               .pad_w = 1};
    check_conv2d<std::int8_t, std::int32_t>(s, tpurt::random_int8(s.input_elements(), 11),
                                            tpurt::random_int8(s.weight_elements(), 12));
    check_conv2d<tpurt::Bf16, float>(s, tpurt::wide_range_bf16(s.input_elements(), 13),
                                     tpurt::wide_range_bf16(s.weight_elements(), 14));
    check_conv2d<float, float>(s, tpurt::random_fp32(s.input_elements(), 15),
                               tpurt::random_fp32(s.weight_elements(), 16));
}
