// SPDX-License-Identifier: MIT
// scratch.cpp - scratch tensors on the device's scratch pool (scratch.hpp).
#include "memory/scratch.hpp"

#include "device/device_state.hpp"

#include <algorithm>
#include <memory>
#include <utility>

namespace tpurt::detail {

Tensor scratch_tensor(Device &device, DType type, std::vector<std::size_t> shape) {
    TensorLayout layout = TensorLayout::contiguous(type, std::move(shape));
    auto pooled = std::make_shared<PooledBuffer>(
        state_of(device).scratch->acquire(std::max<std::size_t>(layout.required_bytes(), 1)));
    // The tensor's buffer shares ownership of the pooled buffer, which goes back to the pool
    // with the last copy of the tensor.
    std::shared_ptr<Buffer> storage(pooled, &pooled->buffer());
    return Tensor(std::move(storage), std::move(layout));
}

} // namespace tpurt::detail
