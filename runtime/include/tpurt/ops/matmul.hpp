// SPDX-License-Identifier: MIT
// matmul.hpp - the high-level matmul: C[M x N] = A[M x K] x B[K x N], row-major, int8 -> int32,
// bf16 -> fp32 or fp32 -> fp32 (the card's native fp32 mode), on the card, exact
// (bit-identical to the k-ascending reference loop).
#pragma once

#include "tpurt/card/buffer.hpp"
#include "tpurt/card/job.hpp"
#include "tpurt/device.hpp"
#include "tpurt/types/bf16.hpp"
#include "tpurt/types/dtype.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>

namespace tpurt {

struct MatmulStats : JobStats {
    std::size_t jobs = 0; // programs the matmul was split into
};

// Operands already in device buffers, densely packed: A holds M*K and B K*N elements of
// `type` (Int8, Bf16 or Fp32), C receives M*N int32 (Int8) or fp32 (Bf16, Fp32). Compiles the
// matmul for the card, runs its jobs and waits for them. Card time is in the returned stats; `wall`
// runs from the first submission to the end of the last job.
MatmulStats matmul(Device &device, const Buffer &a, const Buffer &b, Buffer &c, std::uint32_t m,
                   std::uint32_t k, std::uint32_t n, DType type,
                   std::chrono::nanoseconds timeout = Job::default_timeout);

// Host arrays: copied into device buffers, multiplied, and the result copied back into `c`.
MatmulStats matmul(Device &device, std::span<const std::int8_t> a, std::span<const std::int8_t> b,
                   std::span<std::int32_t> c, std::uint32_t m, std::uint32_t k, std::uint32_t n);
MatmulStats matmul(Device &device, std::span<const Bf16> a, std::span<const Bf16> b,
                   std::span<float> c, std::uint32_t m, std::uint32_t k, std::uint32_t n);
MatmulStats matmul(Device &device, std::span<const float> a, std::span<const float> b,
                   std::span<float> c, std::uint32_t m, std::uint32_t k, std::uint32_t n);

} // namespace tpurt
