// SPDX-License-Identifier: MIT
// scratch.hpp - internal: scratch tensors of the ops that lower to several card programs (a
// TRANSPOSE into scratch, then a matmul; a convolution gradient's permuted operands). They come
// from the device's scratch pool and go back to it when the last holder lets go — the launches
// that write and read them hold them until their jobs have ended — so that a training step
// creates no buffer object (creating and freeing one costs the guest milliseconds, and every
// free invalidates the card's TLB for the context). A pooled buffer holds whatever its last
// user left: only for scratch that the programs write in full before they read it.
#pragma once

#include "tpurt/device.hpp"
#include "tpurt/tensor.hpp"
#include "tpurt/types/dtype.hpp"

#include <cstddef>
#include <vector>

namespace tpurt::detail {

// A contiguous tensor of `shape` on a pooled buffer of the device.
Tensor scratch_tensor(Device &device, DType type, std::vector<std::size_t> shape);

} // namespace tpurt::detail
