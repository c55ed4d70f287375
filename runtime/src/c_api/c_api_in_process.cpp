// SPDX-License-Identifier: MIT
// c_api_in_process.cpp - tpurt_open_in_process(), tpurt_open_in_process_fabric(),
// tpurt_in_process_set_link(): the C forms of Device::open_in_process(),
// open_in_process_fabric() and set_link().
// Part of the tpurt_engine library.
#include "c_api/c_api_internal.hpp"

#include <cstddef>
#include <vector>

using namespace tpurt::c_api;

extern "C" {

namespace {

tpurt::InProcessConfig config_of(const struct tpurt_in_process_config *config, const char *call) {
    tpurt::InProcessConfig cfg;
    if (config) {
        const tpurt_in_process_config in =
            read_versioned(config, sizeof(tpurt_in_process_config), call);
        cfg.mxu_rows = in.mxu_rows;
        cfg.mxu_cols = in.mxu_cols;
        cfg.ub_bytes = in.ub_bytes;
        cfg.acc_bytes = in.acc_bytes;
        cfg.clock_mhz = in.clock_mhz;
        cfg.threads = in.threads;
        cfg.cycle_accurate = in.cycle_accurate != 0;
    }
    return cfg;
}

} // namespace

int tpurt_open_in_process(const struct tpurt_in_process_config *config, tpurt_device **out) {
    if (!out)
        return fail(TPURT_E_INVALID, "tpurt_open_in_process: out is NULL");
    return guarded([&] {
        *out = new tpurt_device{
            tpurt::Device::open_in_process(config_of(config, "tpurt_open_in_process"))};
        return TPURT_OK;
    });
}

int tpurt_open_in_process_fabric(const struct tpurt_fabric_config *fabric,
                                 const struct tpurt_in_process_config *config, tpurt_device **out,
                                 uint32_t count) {
    constexpr const char *call = "tpurt_open_in_process_fabric";
    return guarded([&] {
        require(out, call, "out");
        const tpurt_fabric_config in =
            read_versioned(fabric, offsetof(tpurt_fabric_config, y_link_gbps), call);
        tpurt::FabricConfig f;
        f.torus = in.torus != 0;
        f.dim_x = in.dim_x;
        f.dim_y = f.torus ? in.dim_y : 1;
        if (in.link_gbps)
            f.link_gbps = in.link_gbps;
        f.hop_ns = in.hop_ns;
        if (in.credits)
            f.credits = in.credits;
        f.y_link_gbps = in.y_link_gbps;
        f.y_hop_ns = in.y_hop_ns;
        if (count != std::uint64_t{f.dim_x} * f.dim_y)
            throw tpurt::Error(tpurt::ErrorCode::InvalidArgument,
                               std::string(call) + ": out holds " + std::to_string(count) +
                                   " devices, the fabric has dim_x x dim_y cards");
        std::vector<tpurt::Device> devices =
            tpurt::Device::open_in_process_fabric(f, config_of(config, call));
        for (uint32_t i = 0; i < count; ++i)
            out[i] = new tpurt_device{devices[i]};
        return TPURT_OK;
    });
}

int tpurt_in_process_set_link(tpurt_device *dev, uint32_t port, int up) {
    return guarded([&] {
        require(dev, "tpurt_in_process_set_link", "dev");
        dev->device.set_link(port, up != 0);
        return TPURT_OK;
    });
}

} // extern "C"
