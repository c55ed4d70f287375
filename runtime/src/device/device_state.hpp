// SPDX-License-Identifier: MIT
// device_state.hpp - internal: what every copy of a tpurt::Device shares: the card's backend
// (the driver's device file or the engine in the process), its properties, the program,
// staging and scratch pools and the executable cache.
#pragma once

#include "backend/backend.hpp"
#include "exec/executable_cache.hpp"
#include "memory/buffer_pool.hpp"
#include "tpurt/device.hpp"
#include "tpurt/device_info.hpp"

#include <memory>

namespace tpurt::detail {

struct DeviceState {
    std::shared_ptr<Backend> backend;
    DeviceInfo info;
    std::shared_ptr<BufferPool> programs; // one buffer per job in flight
    std::shared_ptr<BufferPool> staging;  // host arrays of the ops' host-array forms
    std::shared_ptr<BufferPool> scratch;  // the ops' scratch tensors (scratch.hpp)
    ExecutableCache executables;
};

} // namespace tpurt::detail
