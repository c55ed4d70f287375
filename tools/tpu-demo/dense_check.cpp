// SPDX-License-Identifier: MIT
// dense_check.cpp - tpu-demo's dense layer: relu(A x W + bias) in bf16 on the card (MATMUL,
// then ACTIVATE on the card's vector unit), compared byte for byte with the CPU reference.
#include "dense_check.hpp"

#include <tpurt/golden/reference_dense.hpp>
#include <tpurt/ops/dense.hpp>
#include <tpurt/testing/test_patterns.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

double ms(std::chrono::nanoseconds t) {
    return std::chrono::duration<double, std::milli>(t).count();
}

template <typename T> std::vector<std::byte> bytes_of(const std::vector<T> &values) {
    std::vector<std::byte> out(values.size() * sizeof(T));
    std::memcpy(out.data(), values.data(), out.size());
    return out;
}

} // namespace

bool check_dense(tpurt::Device &device, const MatmulShape &s) {
    const tpurt::DenseLayer layer{.m = s.m,
                                  .k = s.k,
                                  .n = s.n,
                                  .in_type = tpurt::DType::Bf16,
                                  .out_type = tpurt::DType::Bf16,
                                  .activation = tpurt::Activation::Relu};
    std::printf("\ndense layer relu(A x W + bias), bf16 -> bf16, %ux%ux%u\n", s.m, s.k, s.n);
    const auto a = bytes_of(tpurt::random_bf16(std::size_t{s.m} * s.k, 7));
    const auto w = bytes_of(tpurt::random_bf16(std::size_t{s.k} * s.n, 8));
    const std::vector<float> bias = tpurt::random_fp32(s.n, 9);
    std::vector<std::byte> card(std::size_t{s.m} * s.n * 2);
    const tpurt::MatmulStats stats = tpurt::dense(device, a, w, bias, card, layer);
    std::printf("  card:      %.2f ms wall, %zu job%s, %llu cycles = %.3f ms modelled\n",
                ms(stats.wall), stats.jobs, stats.jobs == 1 ? "" : "s",
                static_cast<unsigned long long>(stats.cycles),
                ms(stats.modelled_time(device.info())));
    const auto start = std::chrono::steady_clock::now();
    const std::vector<std::byte> ref = tpurt::reference_dense(layer, a, w, bias);
    std::printf("  reference: %.2f ms (CPU, plain loops)\n",
                ms(std::chrono::steady_clock::now() - start));
    const bool exact = card == ref;
    std::printf("  exact: %s\n", exact ? "yes" : "NO — the card's outputs differ");
    return exact;
}
