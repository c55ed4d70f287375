// SPDX-License-Identifier: MIT
// test_tensors.cpp - guest test: tensors on the real card. Host <-> device copies through
// strided views land where the strides say (checked through the buffer's own mapping);
// matmuls on views (row slices and column windows of larger matrices, operands at offsets in
// a shared buffer) equal the reference loops on the same elements copied out, for int8, bf16
// and fp32, and so do dense layers and convolutions on tensors; a transpose on the card gives
// the transposed view's elements; wrong shapes, types and layouts are refused with a message naming
// the operand.
#include <tpurt/golden/reference.hpp>
#include <tpurt/golden/reference_conv2d.hpp>
#include <tpurt/golden/reference_dense.hpp>
#include <tpurt/golden/reference_fp32.hpp>
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/tpurt.hpp>

#include "runtime_helpers.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using tpurt::DType;
using tpurt::Tensor;

using guest_test::device;

// Columns [c0, c0 + cols) of rows [r0, r0 + rows) of a dense row-major host matrix.
template <typename T>
std::vector<T> window(const std::vector<T> &m, std::size_t width, std::size_t r0, std::size_t rows,
                      std::size_t c0, std::size_t cols) {
    std::vector<T> out;
    for (std::size_t r = r0; r < r0 + rows; ++r)
        out.insert(out.end(), m.begin() + (r * width + c0), m.begin() + (r * width + c0 + cols));
    return out;
}

template <typename T> std::vector<T> random_values(std::size_t count, std::uint64_t seed) {
    if constexpr (std::is_same_v<T, std::int8_t>)
        return tpurt::random_int8(count, seed);
    else if constexpr (std::is_same_v<T, tpurt::Bf16>)
        return tpurt::random_bf16(count, seed);
    else
        return tpurt::random_fp32(count, seed);
}

// C (a window of a larger output) = A (a window of a larger matrix) x B (rows of a matrix
// at an offset in a buffer shared with other data), checked against the reference on the
// same elements.
template <typename In, typename Out> void check_matmul_on_views(std::uint64_t seed) {
    const DType type = tpurt::DTypeOf<In>::value;
    INFO(tpurt::dtype_name(type));
    const std::size_t m = 131, k = 200, n = 77;
    // A is rows 5.. and columns 3.. of a (m + 9) x (k + 11) matrix.
    const auto big_a = random_values<In>((m + 9) * (k + 11), seed);
    const Tensor a_full = Tensor::from_host<In>(device(), big_a, {m + 9, k + 11});
    const Tensor a = a_full.slice(0, 5, 5 + m).slice(1, 3, 3 + k);
    // B lives after 1000 unrelated elements of one flat buffer.
    const auto b_values = random_values<In>(k * n, seed + 1);
    Tensor flat = Tensor::empty(device(), type, {1000 + k * n});
    Tensor b = flat.slice(0, 1000, 1000 + k * n).reshape({k, n});
    b.copy_from_host(b_values);
    // C is columns 4.. of an m x (n + 8) output.
    Tensor c_full = Tensor::empty(device(), tpurt::accumulator_type(type), {m, n + 8});
    Tensor c = c_full.slice(1, 4, 4 + n);

    const tpurt::MatmulStats stats = tpurt::matmul(device(), a, b, c);
    CHECK(stats.macs == std::uint64_t{m} * k * n);

    std::vector<Out> ref(m * n);
    tpurt::reference_matmul(std::span<const In>(window(big_a, k + 11, 5, m, 3, k)),
                            std::span<const In>(b_values), std::span<Out>(ref), m, k, n);
    const std::vector<Out> got = c.to_vector<Out>();
    CHECK(std::memcmp(got.data(), ref.data(), ref.size() * sizeof(Out)) == 0);
    // The columns of c_full outside the window were not touched (fresh pages are zero).
    const std::vector<Out> whole = c_full.to_vector<Out>();
    for (std::size_t r = 0; r < m; ++r)
        for (std::size_t col : {0u, 3u, unsigned(n + 4), unsigned(n + 7)})
            CHECK(whole[r * (n + 8) + col] == Out{});
}

using guest_test::require_refused;

} // namespace

TEST_CASE("host copies through views follow the strides", "[tensor]") {
    Tensor t = Tensor::empty(device(), DType::Fp32, {6, 10});
    CHECK(t.buffer().size() >= 240);
    Tensor view = t.slice(0, 1, 5).slice(1, 2, 9).transpose(0, 1); // 7 x 4, strides {1, 10}
    std::vector<float> values(28);
    std::iota(values.begin(), values.end(), 1.0f);
    view.copy_from_host(values);
    const float *raw = t.buffer().as<float>().data();
    for (std::size_t i = 0; i < 7; ++i)
        for (std::size_t j = 0; j < 4; ++j)
            CHECK(raw[(1 + j) * 10 + 2 + i] == values[i * 4 + j]);
    CHECK(view.to_vector<float>() == values);
    CHECK(view.device_addr() == t.buffer().device_addr() + (10 + 2) * 4);
    const std::size_t order[] = {1, 0};
    CHECK(view.permute(order).to_vector<float>() ==
          t.slice(0, 1, 5).slice(1, 2, 9).to_vector<float>());
}

TEST_CASE("matmul on tensor views equals the reference", "[tensor][matmul]") {
    check_matmul_on_views<std::int8_t, std::int32_t>(11);
    check_matmul_on_views<tpurt::Bf16, float>(21);
    check_matmul_on_views<float, float>(31);
}

TEST_CASE("dense layers on tensor views equal the reference", "[tensor][dense]") {
    for (const DType in : {DType::Int8, DType::Bf16, DType::Fp32}) {
        const tpurt::DenseLayer layer{.m = 70,
                                      .k = 150,
                                      .n = 130,
                                      .in_type = in,
                                      .out_type = in == DType::Fp32 ? DType::Fp32 : DType::Int8,
                                      .activation = tpurt::Activation::Relu,
                                      .scale = in == DType::Int8 ? 1.0f / 64 : 0.5f};
        INFO(tpurt::dtype_name(in));
        const std::size_t elem = tpurt::element_size(in);
        // A: rows 2.. of a (m + 2) x k tensor; W dense; out: columns 1.. of m x (n + 3).
        std::vector<std::byte> a_bytes((layer.m + 2) * layer.k * elem),
            w_bytes(layer.k * layer.n * elem);
        const auto fill = [&](std::vector<std::byte> &bytes, std::uint64_t seed) {
            if (in == DType::Int8)
                std::memcpy(bytes.data(), tpurt::random_int8(bytes.size(), seed).data(),
                            bytes.size());
            else if (in == DType::Bf16)
                std::memcpy(bytes.data(), tpurt::random_bf16(bytes.size() / 2, seed).data(),
                            bytes.size());
            else
                std::memcpy(bytes.data(), tpurt::random_fp32(bytes.size() / 4, seed).data(),
                            bytes.size());
        };
        fill(a_bytes, 41);
        fill(w_bytes, 42);
        std::vector<float> bias = tpurt::random_fp32(layer.n, 43);
        Tensor a_full = Tensor::empty(device(), in, {layer.m + 2, layer.k});
        a_full.copy_from_host(a_bytes.data(), a_bytes.size());
        Tensor w = Tensor::empty(device(), in, {layer.k, layer.n});
        w.copy_from_host(w_bytes.data(), w_bytes.size());
        const Tensor b = Tensor::from_host<float>(device(), bias, {layer.n});
        Tensor out_full = Tensor::empty(device(), layer.out_type, {layer.m, layer.n + 3});
        Tensor out = out_full.slice(1, 1, 1 + layer.n);
        tpurt::dense(device(), a_full.slice(0, 2, 2 + layer.m), w, &b, out, layer.activation,
                     layer.scale);
        std::vector<std::byte> got(layer.m * layer.n * tpurt::element_size(layer.out_type));
        out.copy_to_host(got.data(), got.size());
        const std::span<const std::byte> a_view(a_bytes.data() + 2 * layer.k * elem,
                                                layer.m * layer.k * elem);
        CHECK(got == tpurt::reference_dense(layer, a_view, w_bytes, bias));
    }
}

TEST_CASE("conv2d on tensors equals the reference", "[tensor][conv2d]") {
    const tpurt::Conv2dShape s{.batch = 2,
                               .height = 9,
                               .width = 10,
                               .channels = 6,
                               .kernel_h = 3,
                               .kernel_w = 3,
                               .filters = 5,
                               .stride_h = 2,
                               .stride_w = 1,
                               .pad_h = 1,
                               .pad_w = 1};
    const auto input = tpurt::random_bf16(s.input_elements(), 51);
    const auto weights = tpurt::random_bf16(s.weight_elements(), 52);
    const Tensor in = Tensor::from_host<tpurt::Bf16>(device(), input, {2, 9, 10, 6});
    const Tensor w = Tensor::from_host<tpurt::Bf16>(device(), weights, {3, 3, 6, 5});
    Tensor out = Tensor::empty(device(), DType::Fp32, {2, s.out_height(), s.out_width(), 5});
    tpurt::conv2d(device(), in, w, out, {.stride_h = 2, .stride_w = 1, .pad_h = 1, .pad_w = 1});
    std::vector<float> ref(s.output_elements());
    tpurt::reference_conv2d(std::span<const tpurt::Bf16>(input),
                            std::span<const tpurt::Bf16>(weights), std::span<float>(ref), s);
    const std::vector<float> got = out.to_vector<float>();
    CHECK(std::memcmp(got.data(), ref.data(), ref.size() * 4) == 0);
    Tensor wrong = Tensor::empty(device(), DType::Fp32, {2, 9, 10, 5});
    require_refused(
        [&] { tpurt::conv2d(device(), in, w, wrong, {.stride_h = 2, .pad_h = 1, .pad_w = 1}); },
        "must have the shape");
}

TEST_CASE("transpose on the card, and a matmul with a transposed operand", "[tensor][transpose]") {
    // C = A^T x B with A stored K x M: transpose A's view on the card, then multiply.
    const std::size_t m = 90, k = 140, n = 60;
    const auto at = tpurt::random_fp32(k * m, 61), b = tpurt::random_fp32(k * n, 62);
    const Tensor a_stored = Tensor::from_host<float>(device(), at, {k, m});
    Tensor a = Tensor::empty(device(), DType::Fp32, {m, k});
    tpurt::transpose(device(), a_stored, a);
    std::vector<float> a_values(m * k);
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < k; ++j)
            a_values[i * k + j] = at[j * m + i];
    CHECK(a.to_vector<float>() == a_values);
    CHECK(a.to_vector<float>() == a_stored.transpose(0, 1).to_vector<float>());
    Tensor c = Tensor::empty(device(), DType::Fp32, {m, n});
    tpurt::matmul(device(), a, Tensor::from_host<float>(device(), b, {k, n}), c);
    std::vector<float> ref(m * n);
    tpurt::reference_matmul(std::span<const float>(a_values), std::span<const float>(b),
                            std::span<float>(ref), m, k, n);
    CHECK(c.to_vector<float>() == ref);
    require_refused([&] { tpurt::transpose(device(), a_stored, c); }, "transposed");
}

TEST_CASE("tensor misuse is refused with what is wrong", "[tensor][errors]") {
    Tensor a = Tensor::empty(device(), DType::Bf16, {8, 16});
    Tensor b = Tensor::empty(device(), DType::Bf16, {16, 4});
    Tensor c = Tensor::empty(device(), DType::Fp32, {8, 4});
    Tensor wrong_c = Tensor::empty(device(), DType::Bf16, {8, 4});
    Tensor short_b = Tensor::empty(device(), DType::Bf16, {15, 4});
    Tensor int_b = Tensor::empty(device(), DType::Int8, {16, 4});
    require_refused([&] { tpurt::matmul(device(), a, b, wrong_c); }, "C is bf16[8, 4]");
    require_refused([&] { tpurt::matmul(device(), a, short_b, c); }, "do not chain");
    require_refused([&] { tpurt::matmul(device(), a, int_b, c); }, "needs bf16");
    require_refused([&] { tpurt::matmul(device(), a.transpose(0, 1), c, c); }, "transposed");
    require_refused([&] { tpurt::matmul(device(), a.select(0, 1), b, c); }, "not a matrix");
    require_refused([&] { a.copy_from_host(std::vector<float>(128)); }, "holds bf16");
    require_refused([&] { a.copy_from_host(std::vector<tpurt::Bf16>(127)); }, "bytes given");
    require_refused(
        [&] {
            Tensor(a.storage(), tpurt::TensorLayout::contiguous(DType::Bf16, {8, 300}));
        },
        "its buffer holds");
    CHECK(a.buffer().size() < 8 * 300 * 2); // one page: the layout above reaches beyond it
    require_refused([&] { a.slice(1, 4, 20); }, "out of range");
    Tensor broadcast(a.storage(), tpurt::TensorLayout(DType::Bf16, {8, 16}, {0, 1}));
    require_refused([&] { broadcast.copy_from_host(std::vector<tpurt::Bf16>(128)); }, "stride 0");
}
