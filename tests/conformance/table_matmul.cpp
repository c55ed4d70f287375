// SPDX-License-Identifier: MIT
// table_matmul.cpp - the conformance cases of the matmul family: matmul (int8 -> int32, bf16
// and fp32 -> fp32), dense (bias, scale, exact activations, output conversions), matmul_tn and
// matmul_nt (the weight and input gradients, through a TRANSPOSE copy) and batched_matmul (per
// batch or a shared b), on shapes of 1, primes and just over the 128 x 128 array; all exact
// against golden/reference*.hpp.
#include "conformance.hpp"

#include <tpurt/golden/reference.hpp>
#include <tpurt/golden/reference_dense.hpp>
#include <tpurt/golden/reference_fp32.hpp>

namespace conformance {

namespace {

template <typename T> std::span<const T> view(std::span<const std::byte> s) {
    return {reinterpret_cast<const T *>(s.data()), s.size() / sizeof(T)};
}

// c = a x b in `type`'s card arithmetic on raw bytes (int8 -> int32, bf16 / fp32 -> fp32).
std::vector<std::byte> matmul_bytes(DType type, std::span<const std::byte> a,
                                    std::span<const std::byte> b, std::uint32_t m, std::uint32_t k,
                                    std::uint32_t n) {
    std::vector<std::byte> c(std::size_t{m} * n * 4);
    const std::span<float> cf(reinterpret_cast<float *>(c.data()), std::size_t{m} * n);
    if (type == DType::Int8)
        tpurt::reference_matmul(view<std::int8_t>(a), view<std::int8_t>(b),
                                {reinterpret_cast<std::int32_t *>(c.data()), std::size_t{m} * n}, m,
                                k, n);
    else if (type == DType::Bf16)
        tpurt::reference_matmul(view<tpurt::Bf16>(a), view<tpurt::Bf16>(b), cf, m, k, n);
    else
        tpurt::reference_matmul(view<float>(a), view<float>(b), cf, m, k, n);
    return c;
}

// rows x cols elements of `size` bytes transposed.
std::vector<std::byte> transposed(std::span<const std::byte> a, std::size_t rows, std::size_t cols,
                                  std::size_t size) {
    std::vector<std::byte> t(a.size());
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c)
            std::memcpy(&t[(c * rows + r) * size], &a[(r * cols + c) * size], size);
    return t;
}

DType acc_type(DType type) {
    return type == DType::Int8 ? DType::Int32 : DType::Fp32;
}

Fill inputs(DType type) {
    return type == DType::Int8 ? uniform(-128, 127) : uniform(-2, 2);
}

struct Mkn {
    std::uint32_t m, k, n;
};

std::string label(DType type, const Mkn &s) {
    return std::string(tpurt::dtype_name(type)) + " " + std::to_string(s.m) + "x" +
           std::to_string(s.k) + "x" + std::to_string(s.n);
}

} // namespace

std::vector<Case> matmul_cases() {
    std::vector<Case> cases;
    const std::vector<Mkn> shapes{
        {1, 1, 1}, {7, 13, 5}, {3, 129, 130}, {131, 33, 17}, {129, 257, 131}};
    for (DType type : {DType::Int8, DType::Bf16, DType::Fp32}) {
        for (const Mkn &s : shapes) {
            cases.push_back(
                {"matmul",
                 label(type, s),
                 {in("a", type, {s.m, s.k}, inputs(type)), in("b", type, {s.k, s.n}, inputs(type)),
                  out("c", acc_type(type), {s.m, s.n})},
                 {},
                 [=](Arrays &x) {
                     x.bytes[2] = matmul_bytes(type, x.bytes[0], x.bytes[1], s.m, s.k, s.n);
                 }});
            // matmul_tn: c = a^T b with a [K, M]; matmul_nt: c = a b^T with b [N, K].
            cases.push_back(
                {"matmul_tn",
                 label(type, s),
                 {in("a", type, {s.k, s.m}, inputs(type)), in("b", type, {s.k, s.n}, inputs(type)),
                  out("c", acc_type(type), {s.m, s.n})},
                 {},
                 [=](Arrays &x) {
                     x.bytes[2] = matmul_bytes(
                         type, transposed(x.bytes[0], s.k, s.m, tpurt::element_size(type)),
                         x.bytes[1], s.m, s.k, s.n);
                 }});
            cases.push_back(
                {"matmul_nt",
                 label(type, s),
                 {in("a", type, {s.m, s.k}, inputs(type)), in("b", type, {s.n, s.k}, inputs(type)),
                  out("c", acc_type(type), {s.m, s.n})},
                 {},
                 [=](Arrays &x) {
                     x.bytes[2] =
                         matmul_bytes(type, x.bytes[0],
                                      transposed(x.bytes[1], s.n, s.k, tpurt::element_size(type)),
                                      s.m, s.k, s.n);
                 }});
        }
    }
    // dense: f(scale (a w + bias)) converted to the output type; the exact activations only
    // (reference_dense.hpp: GELU, SIGMOID, TANH, EXP have no bit-exact model).
    struct Dense {
        DType in, out;
        const char *activation;
        const char *scale;
        bool bias;
        Mkn s;
    };
    const std::vector<Dense> dense{
        {DType::Int8, DType::Int8, "relu", "0.0078125", true, {5, 67, 11}},
        {DType::Int8, DType::Int32, "none", "1", false, {1, 1, 1}},
        {DType::Bf16, DType::Bf16, "relu6", "0.5", true, {9, 129, 3}},
        {DType::Bf16, DType::Fp32, "none", "1", false, {2, 31, 130}},
        {DType::Fp32, DType::Fp32, "relu", "2", true, {13, 7, 5}},
        {DType::Fp32, DType::Int8, "none", "16", true, {3, 5, 129}}};
    for (const Dense &d : dense) {
        const tpurt::DenseLayer layer{.m = d.s.m,
                                      .k = d.s.k,
                                      .n = d.s.n,
                                      .in_type = d.in,
                                      .out_type = d.out,
                                      .activation = {},
                                      .scale = std::stof(d.scale)};
        cases.push_back(
            {"dense",
             label(d.in, d.s) + " -> " + tpurt::dtype_name(d.out) + (d.bias ? " bias" : ""),
             {in("a", d.in, {d.s.m, d.s.k}, inputs(d.in)),
              in("w", d.in, {d.s.k, d.s.n}, inputs(d.in)), out("out", d.out, {d.s.m, d.s.n}),
              d.bias ? in("bias", DType::Fp32, {d.s.n}, uniform(-4, 4)) : none("bias")},
             {{"activation", d.activation}, {"scale", d.scale}},
             [=](Arrays &x) {
                 tpurt::DenseLayer l = layer;
                 l.activation = std::string(d.activation) == "relu"    ? tpurt::Activation::Relu
                                : std::string(d.activation) == "relu6" ? tpurt::Activation::Relu6
                                                                       : tpurt::Activation::None;
                 const std::vector<float> bias = d.bias ? x.floats(3) : std::vector<float>{};
                 x.bytes[2] = tpurt::reference_dense(l, x.bytes[0], x.bytes[1], bias);
             }});
    }
    // Rows of a, b and c strided (views of wider tensors).
    for (DType type : {DType::Int8, DType::Bf16, DType::Fp32}) {
        const Mkn s{37, 140, 129};
        cases.push_back({"matmul",
                         label(type, s) + " strided",
                         {strided(in("a", type, {s.m, s.k}, inputs(type)), 5),
                          strided(in("b", type, {s.k, s.n}, inputs(type)), 64),
                          strided(out("c", acc_type(type), {s.m, s.n}), 8)},
                         {},
                         [=](Arrays &x) {
                             x.bytes[2] = matmul_bytes(type, x.bytes[0], x.bytes[1], s.m, s.k, s.n);
                         }});
    }
    // batched_matmul: a [B, M, K] x b [B, K, N], or b [K, N] shared by every batch.
    for (DType type : {DType::Int8, DType::Bf16, DType::Fp32}) {
        for (bool shared : {false, true}) {
            const std::uint32_t batches = 3;
            const Mkn s{5, 37, 7};
            const Shape b_shape = shared ? Shape{s.k, s.n} : Shape{batches, s.k, s.n};
            cases.push_back({"batched_matmul",
                             label(type, s) + " x3" + (shared ? " shared b" : ""),
                             {in("a", type, {batches, s.m, s.k}, inputs(type)),
                              in("b", type, b_shape, inputs(type)),
                              out("c", acc_type(type), {batches, s.m, s.n})},
                             {},
                             [=](Arrays &x) {
                                 const std::size_t size = tpurt::element_size(type);
                                 const std::size_t ab = std::size_t{s.m} * s.k * size,
                                                   bb = std::size_t{s.k} * s.n * size;
                                 std::vector<std::byte> c;
                                 for (std::uint32_t i = 0; i < batches; ++i) {
                                     const auto part = matmul_bytes(
                                         type, std::span(x.bytes[0]).subspan(i * ab, ab),
                                         std::span(x.bytes[1]).subspan(shared ? 0 : i * bb, bb),
                                         s.m, s.k, s.n);
                                     c.insert(c.end(), part.begin(), part.end());
                                 }
                                 x.bytes[2] = c;
                             }});
        }
    }
    return cases;
}

} // namespace conformance
