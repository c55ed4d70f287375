// SPDX-License-Identifier: MIT
// MATMULs against a K x 1 fp32 weight column (weight_column.hpp): the loop, compiled once
// plainly and once for AVX2 + FMA hosts, where fma is one instruction instead of a call into the
// C library and single-k loops go eight rows a step.
#include "mxu/weight_column.hpp"

#include <bit>
#include <cmath>
#include <cstring>

namespace tpu::engine {
namespace {

// Rows [m0, m0 + R) with their chains interleaved (one fma chain alone waits on the latency of
// each fma): only for accumulator rows that do not overlap.
template <int R, bool Accumulate>
__attribute__((always_inline)) inline void row_group(const MatmulArgs &args, const float *w,
                                                     uint32_t k, uint32_t m0) {
    const uint8_t *src[R];
    float c[R];
    for (int r = 0; r < R; r++) {
        src[r] = args.src_row(m0 + r);
        c[r] = 0.0f;
        if (Accumulate)
            std::memcpy(&c[r], args.acc + (m0 + r) * args.acc_stride, sizeof(float));
    }
    for (uint32_t i = 0; i < k; i++)
        for (int r = 0; r < R; r++) {
            float a;
            std::memcpy(&a, src[r] + 4 * uint64_t(i), sizeof(a));
            c[r] = std::fma(a, w[i], c[r]);
        }
    for (int r = 0; r < R; r++) {
        uint32_t bits = std::bit_cast<uint32_t>(c[r]);
        if ((bits & 0x7fffffffu) > 0x7f800000u)
            bits = kCanonicalNan;
        std::memcpy(args.acc + (m0 + r) * args.acc_stride, &bits, sizeof(bits));
    }
}

// K = 1, all rows one group (row m at src + m src_stride, SrcStride that stride when it is a
// constant, else -1) into accumulator rows 4 bytes apart: the rows are independent, each one
// fma, in a loop the compiler vectorises.
template <bool Accumulate, int SrcStride>
__attribute__((always_inline)) inline void single_k(const MatmulArgs &args, float w) {
    const uint64_t stride = SrcStride >= 0 ? uint64_t(SrcStride) : args.src_stride;
    for (uint32_t m = 0; m < args.rows; m++) {
        float a, c = 0.0f;
        std::memcpy(&a, args.src + m * stride, sizeof(a));
        if (Accumulate)
            std::memcpy(&c, args.acc + 4 * uint64_t(m), sizeof(c));
        uint32_t bits = std::bit_cast<uint32_t>(std::fma(a, w, c));
        if ((bits & 0x7fffffffu) > 0x7f800000u)
            bits = kCanonicalNan;
        std::memcpy(args.acc + 4 * uint64_t(m), &bits, sizeof(bits));
    }
}

template <bool Accumulate>
__attribute__((always_inline)) inline void single_k(const MatmulArgs &args, float w) {
    if (args.src_stride == 4)
        single_k<Accumulate, 4>(args, w);
    else if (args.src_stride == 0)
        single_k<Accumulate, 0>(args, w);
    else
        single_k<Accumulate, -1>(args, w);
}

template <bool Accumulate>
__attribute__((always_inline)) inline void rows(const MatmulArgs &args, const float *w,
                                                uint32_t k) {
    if (k == 1 && args.acc_stride == 4 && (args.row_group == 0 || args.row_group >= args.rows))
        return single_k<Accumulate>(args, w[0]);
    constexpr int kGroup = 8;
    uint32_t m = 0;
    // Rows of 4 bytes at least 4 apart do not overlap; others run one after the other.
    if (args.acc_stride >= 4)
        for (; m + kGroup <= args.rows; m += kGroup)
            row_group<kGroup, Accumulate>(args, w, k, m);
    for (; m < args.rows; m++)
        row_group<1, Accumulate>(args, w, k, m);
}

__attribute__((always_inline)) inline void run(const MatmulArgs &args, const float *w, uint32_t k) {
    if (args.accumulate)
        rows<true>(args, w, k);
    else
        rows<false>(args, w, k);
}

void run_plain(const MatmulArgs &args, const float *w, uint32_t k) {
    run(args, w, k);
}

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) void run_fma(const MatmulArgs &args, const float *w,
                                                 uint32_t k) {
    run(args, w, k);
}
#endif

} // namespace

void run_weight_column(const WeightTile &tile, const MatmulArgs &args) {
    // The words of an fp32 tile are its values (n = 1: one per k).
    const auto *w = reinterpret_cast<const float *>(tile.words());
#if defined(__x86_64__)
    static const bool has_avx2_fma =
        __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (has_avx2_fma)
        return run_fma(args, w, tile.k());
#endif
    run_plain(args, w, tile.k());
}

} // namespace tpu::engine
