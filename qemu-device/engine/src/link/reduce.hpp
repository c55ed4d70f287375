// SPDX-License-Identifier: MIT
// The receive-reduce of RECV (docs/hardware.md section 10, "Receive-reduce"): each element of
// the arriving message combined with the element already at the destination, in ascending
// address order, one operation per element, dst = dst op msg:
//   SUM   FP32 one binary32 addition (RNE, subnormals kept); BF16 both widened exactly, one
//         binary32 addition, rounded to bf16 (RNE); INT32 two's-complement wrap-around
//   MAX / MIN  VECTOR's rule: NaN if either is NaN, msg if msg > dst (MIN: <), else dst
// NaN results are the canonical quiet NaN. Callers hold an FpEnvGuard.
#pragma once

#include <cstdint>

namespace tpu::engine {

// dst[i] = dst[i] op msg[i] over bytes / size(dtype) elements (op: tpu_link_reduce, not COPY).
void link_reduce(uint8_t op, uint8_t dtype, uint8_t *dst, const uint8_t *msg, uint64_t bytes);

} // namespace tpu::engine
