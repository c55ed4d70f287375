// SPDX-License-Identifier: MIT
// reference.hpp - plain CPU matmuls with the card's exact numerics, the golden model that
// tests and tools compare the card against: int8 products summed into int32 with two's-
// complement wrap-around, and bf16 (spec 1.3) from +0.0f in blocks of 32 k, each an even-k and
// an odd-k chain of steps chain = FTZ(RNE(DAZ(chain) + DAZ(a) DAZ(b))) (exact product) from
// +0, then acc = FTZ(RNE(DAZ(acc) + FTZ(RNE(E + O)))).
// Loops run in i-k-j order (cache-friendly, still the card's k order for every output).
#pragma once

#include "tpurt/types/bf16.hpp"

#include <cstdint>
#include <span>

namespace tpurt {

// c[M x N] = a[M x K] x b[K x N], row-major, spans of at least M*K, K*N and M*N elements.
void reference_matmul(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                      std::span<std::int32_t> c, std::uint32_t m, std::uint32_t k, std::uint32_t n);
void reference_matmul(std::span<const Bf16> a, std::span<const Bf16> b, std::span<float> c,
                      std::uint32_t m, std::uint32_t k, std::uint32_t n);

} // namespace tpurt
