// SPDX-License-Identifier: MIT
// raw_values.hpp - the collectives' test data as raw words (RawValues: fp32, bf16 or int32
// elements held in 32-bit words, golden/reference_collectives.hpp): random values of every
// magnitude, and copies between them and a densely packed tensor's host pages, bit for bit.
#pragma once

#include "tpurt/golden/reference_collectives.hpp"
#include "tpurt/tensor.hpp"

#include <cstddef>
#include <random>

namespace tpurt {

// `n` elements of `type`: fp32 and bf16 finite values of either sign and magnitudes from 2^-30
// to 2^29 (bf16: such an fp32 rounded), int32 any 32 bits.
RawValues random_raw_values(DType type, std::size_t n, std::mt19937 &rng);

// Writes v's elements into the densely packed tensor t (t holds at least v.size()).
void write_raw(const Tensor &t, const RawValues &v);
// The densely packed tensor's elements.
RawValues read_raw(const Tensor &t);
// A new tensor of v's elements on `device`.
Tensor raw_tensor(Device &device, DType type, const RawValues &v);

} // namespace tpurt
