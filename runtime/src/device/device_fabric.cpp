// SPDX-License-Identifier: MIT
// device_fabric.cpp - tpurt::Device::open_in_process_fabric(): in-process cards (the engine
// library, engine_backend.hpp) joined by one tpu_fabric of the engine, as QEMU's tpu-ici object
// joins its cards. Part of the tpurt_engine library.
#include "backend/engine_backend.hpp"
#include "tpurt/device.hpp"
#include "tpurt/error.hpp"

namespace tpurt {

std::vector<Device> Device::open_in_process_fabric(const FabricConfig &fabric,
                                                   const InProcessConfig &config) {
    const tpu_fabric_config cfg = {
        .topology = fabric.torus ? TPU_ICI_TOPO_TORUS2D : TPU_ICI_TOPO_RING,
        .dim_x = fabric.dim_x,
        .dim_y = fabric.torus ? fabric.dim_y : 1,
        .link_gbps = fabric.link_gbps,
        .hop_ns = fabric.hop_ns,
        .credits = fabric.credits,
        .y_link_gbps = fabric.torus ? fabric.y_link_gbps : 0,
        .y_hop_ns = fabric.torus ? fabric.y_hop_ns : 0,
    };
    char why[256] = "";
    std::shared_ptr<tpu_fabric> shared(tpu_fabric_create(&cfg, why, sizeof(why)),
                                       tpu_fabric_destroy);
    if (!shared)
        throw Error(ErrorCode::InvalidArgument, std::string("in-process fabric: ") + why);
    std::vector<Device> devices;
    for (std::uint32_t y = 0; y < cfg.dim_y; ++y)
        for (std::uint32_t x = 0; x < cfg.dim_x; ++x) {
            auto backend = std::make_shared<detail::EngineBackend>(config, shared, x, y);
            DeviceInfo info = backend->query_info();
            devices.push_back(Device(std::move(backend), std::move(info)));
        }
    return devices;
}

} // namespace tpurt
