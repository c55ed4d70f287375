// SPDX-License-Identifier: MIT
// reference_fp32.hpp - the CPU golden model of the card's native fp32 matmul: per output,
// acc = +0.0f, then for k ascending acc = fmaf(a[m][k], b[k][n], acc) (exact product, one
// binary32 round-to-nearest-even per step, subnormals kept); a NaN result is the canonical
// quiet NaN 0x7fc00000, as the card stores it.
#pragma once

#include <cstdint>
#include <span>

namespace tpurt {

// fmaf(a, b, c), correctly rounded, without a hardware FMA: the product is exact in binary64;
// the binary64 sum rounded to binary32 is correct unless it lands exactly on a binary32
// midpoint (or is tiny), and then the sum is rounded to odd in binary64 first, which makes the
// second rounding correct (53 >= 24 + 2 bits). Fast where std::fmaf is a software routine
// (guests under emulation without FMA). NaN results are the canonical quiet NaN.
float fused_multiply_add(float a, float b, float c);

// x + y rounded to odd in binary64 (the nearest-even sum moved one ulp towards the exact sum
// when it was inexact and even): rounding it once more to 24 bits or fewer gives the correctly
// rounded exact sum.
double add_round_to_odd(double x, double y);

// c[M x N] = a[M x K] x b[K x N], row-major, spans of at least M*K, K*N and M*N elements.
// Loops run in i-k-j order (still k-ascending for every output).
void reference_matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
                      std::uint32_t m, std::uint32_t k, std::uint32_t n);

} // namespace tpurt
