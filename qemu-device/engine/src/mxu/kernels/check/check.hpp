// SPDX-License-Identifier: MIT
// Start-up check of a kernel set against the portable scalar model of the card's numerics: the
// vector kernels rely on what the host CPU's vdpbf16ps, AMX tiles, VNNI, or fma under MXCSR
// flush-to-zero / denormals-are-zero compute, so before the engine uses a set it runs a fixed
// batch of operands through the set and the scalar kernels and compares every bit: bf16 with
// tricky values (subnormals, results next to the smallest normal, cancellation, overflow,
// infinities, NaN) over K within, on the edges of and across the 32-k blocks, plus cases of
// Intel AMX tdpbf16ps recorded on hardware (tests/golden/amx-bf16), int8 and fp32 likewise.
#pragma once

#include <cstdint>
#include <span>

#include "mxu/kernels/kernels.hpp"

namespace tpu::engine {

// Whether every kernel of the set gives the scalar model's bits (and the golden cases' AMX
// results, NaN as NaN) on the check operands.
bool kernels_match_model(const RowKernels &kernels);

namespace golden {

// One embedded golden case: C_out (16 x 16 fp32) = C_in + A (16 x K bf16) x W (K x 16 bf16),
// row-major, as tdpbf16ps computed it; index is the case's position in tdpbf16ps.txt.
struct Case {
    uint32_t index;
    uint32_t k;
    const uint32_t *c_in;
    const uint16_t *a;
    const uint16_t *w;
    const uint32_t *c_out;
};

std::span<const Case> cases();

} // namespace golden
} // namespace tpu::engine
