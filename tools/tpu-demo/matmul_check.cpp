// SPDX-License-Identifier: MIT
// matmul_check.cpp - one card-vs-reference matmul of tpu-demo: deterministic inputs, the card
// run through libtpurt, the CPU reference, an exact comparison and the timing report.
#include "matmul_check.hpp"

#include <tpurt/golden/reference.hpp>
#include <tpurt/golden/reference_fp32.hpp>
#include <tpurt/ops/matmul.hpp>
#include <tpurt/testing/test_patterns.hpp>

#include <bit>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double ms(std::chrono::nanoseconds t) {
    return std::chrono::duration<double, std::milli>(t).count();
}

std::string value_text(std::int32_t v) {
    return std::to_string(v);
}
std::string value_text(float v) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.9g (%a)", static_cast<double>(v), static_cast<double>(v));
    return text;
}

bool same(std::int32_t a, std::int32_t b) {
    return a == b;
}
bool same(float a, float b) {
    return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
}

void print_card(const tpurt::Device &device, const tpurt::MatmulStats &stats) {
    std::printf("  card:      %.2f ms wall, %zu job%s, %llu cycles = %.3f ms modelled, MXU "
                "utilisation %.1f%%\n",
                ms(stats.wall), stats.jobs, stats.jobs == 1 ? "" : "s",
                static_cast<unsigned long long>(stats.cycles),
                ms(stats.modelled_time(device.info())), 100.0 * stats.utilisation(device.info()));
}

template <typename In, typename Out>
bool run(tpurt::Device &device, const MatmulShape &s, const std::vector<In> &a,
         const std::vector<In> &b) {
    std::vector<Out> card(std::size_t{s.m} * s.n), ref(card.size());
    const tpurt::MatmulStats stats =
        tpurt::matmul(device, std::span<const In>(a), std::span<const In>(b), std::span<Out>(card),
                      s.m, s.k, s.n);
    print_card(device, stats);

    const auto start = Clock::now();
    tpurt::reference_matmul(std::span<const In>(a), std::span<const In>(b), std::span<Out>(ref),
                            s.m, s.k, s.n);
    std::printf("  reference: %.2f ms (CPU, plain loops)\n", ms(Clock::now() - start));

    for (std::size_t i = 0; i < card.size(); ++i) {
        if (!same(card[i], ref[i])) {
            std::printf("  exact: NO — first mismatch at C[%zu][%zu]: card %s, reference %s\n",
                        i / s.n, i % s.n, value_text(card[i]).c_str(), value_text(ref[i]).c_str());
            return false;
        }
    }
    std::printf("  exact: yes\n");
    return true;
}

} // namespace

bool check_matmul(tpurt::Device &device, tpurt::DType type, const MatmulShape &s) {
    const std::size_t a_count = std::size_t{s.m} * s.k, b_count = std::size_t{s.k} * s.n;
    std::printf("\n%s x %s -> %s, %ux%ux%u (%.1f M MACs)\n", tpurt::dtype_name(type),
                tpurt::dtype_name(type), tpurt::dtype_name(tpurt::accumulator_type(type)), s.m, s.k,
                s.n, static_cast<double>(a_count) * s.n / 1e6);
    switch (type) {
    case tpurt::DType::Int8:
        return run<std::int8_t, std::int32_t>(device, s, tpurt::random_int8(a_count, 1),
                                              tpurt::random_int8(b_count, 2));
    case tpurt::DType::Bf16:
        return run<tpurt::Bf16, float>(device, s, tpurt::random_bf16(a_count, 3),
                                       tpurt::random_bf16(b_count, 4));
    default:
        return run<float, float>(device, s, tpurt::random_fp32(a_count, 5),
                                 tpurt::random_fp32(b_count, 6));
    }
}
