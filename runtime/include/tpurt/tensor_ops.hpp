// SPDX-License-Identifier: MIT
// tensor_ops.hpp - the card's ops on tensors. Operands may be views: rows of a matrix may lie
// any number of bytes apart (a slice of a larger matrix, an offset into a buffer), but
// the elements of a row must be adjacent (last stride 1); anything else is refused with an
// error that says so. Results are exactly those of the same ops on host arrays.
#pragma once

#include "tpurt/device.hpp"
#include "tpurt/job.hpp"
#include "tpurt/matmul.hpp"
#include "tpurt/tensor.hpp"

#include <chrono>

namespace tpurt {

// c[M, N] = a[M, K] x b[K, N]: a and b Int8 (c Int32), Bf16 or Fp32 (c Fp32).
MatmulStats matmul(Device &device, const Tensor &a, const Tensor &b, Tensor &c,
                   std::chrono::nanoseconds timeout = Job::default_timeout);

} // namespace tpurt
