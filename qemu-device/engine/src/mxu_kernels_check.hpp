// SPDX-License-Identifier: MIT
// Start-up check of a kernel set's bf16 kernel against the portable model of the card's bf16
// numerics (the scalar kernel): the vector kernels rely on what the host CPU's vdpbf16ps, or its
// fma under MXCSR flush-to-zero / denormals-are-zero, computes, so before the engine uses a set
// it runs a fixed batch of tricky operands (subnormals, results next to the smallest normal,
// cancellation, overflow, infinities, NaN, odd K) through both and compares every bit.
#pragma once

#include "mxu_kernels.hpp"

namespace tpu::engine {

// Whether kernels.bf16 gives the scalar model's bits on the check operands.
bool bf16_kernel_matches_model(const RowKernels &kernels);

} // namespace tpu::engine
