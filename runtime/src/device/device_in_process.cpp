// SPDX-License-Identifier: MIT
// device_in_process.cpp - tpurt::Device::open_in_process(): a Device over the engine library
// run in the process (engine_backend.hpp). Part of the tpurt_engine library.
#include "backend/engine_backend.hpp"
#include "tpurt/device.hpp"

namespace tpurt {

Device Device::open_in_process(const InProcessConfig &config) {
    auto backend = std::make_shared<detail::EngineBackend>(config);
    DeviceInfo info = backend->query_info();
    return Device(std::move(backend), std::move(info));
}

} // namespace tpurt
