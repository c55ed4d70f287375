// SPDX-License-Identifier: MIT
// reference.hpp - plain CPU matmuls with the card's exact numerics, the golden model that
// tests and tools compare the card against: int8 products summed into int32 with two's-
// complement wrap-around, and bf16 as acc = fmaf(a, b, acc) over k ascending from +0.0f.
// Loops run in i-k-j order (cache-friendly, still k-ascending for every output).
#pragma once

#include "tpurt/bf16.hpp"

#include <cstdint>
#include <span>

namespace tpurt {

// c[M x N] = a[M x K] x b[K x N], row-major, spans of at least M*K, K*N and M*N elements.
void reference_matmul(std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                      std::span<std::int32_t> c, std::uint32_t m, std::uint32_t k, std::uint32_t n);
void reference_matmul(std::span<const Bf16> a, std::span<const Bf16> b, std::span<float> c,
                      std::uint32_t m, std::uint32_t k, std::uint32_t n);

} // namespace tpurt
