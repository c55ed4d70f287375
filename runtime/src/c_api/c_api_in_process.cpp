// SPDX-License-Identifier: MIT
// c_api_in_process.cpp - tpurt_open_in_process(): the C form of Device::open_in_process().
// Part of the tpurt_engine library.
#include "c_api/c_api_internal.hpp"

using namespace tpurt::c_api;

extern "C" {

int tpurt_open_in_process(const struct tpurt_in_process_config *config, tpurt_device **out) {
    if (!out)
        return fail(TPURT_E_INVALID, "tpurt_open_in_process: out is NULL");
    return guarded([&] {
        tpurt::InProcessConfig cfg;
        if (config) {
            const tpurt_in_process_config in =
                read_versioned(config, sizeof(tpurt_in_process_config), "tpurt_open_in_process");
            cfg = {in.mxu_rows,  in.mxu_cols, in.ub_bytes,           in.acc_bytes,
                   in.clock_mhz, in.threads,  in.cycle_accurate != 0};
        }
        *out = new tpurt_device{tpurt::Device::open_in_process(cfg)};
        return TPURT_OK;
    });
}

} // extern "C"
