// SPDX-License-Identifier: MIT
// Fault: the outcome of one engine step, a TPU_ERR_* status plus the fault address that goes into
// the completion record (device VA for MMU and bus faults, local offset for UB/ACC range faults).
#pragma once

#include <cstdint>

#include "tpu_hw.h"

namespace tpu::engine {

struct Fault {
    uint32_t status = TPU_ERR_NONE;
    uint64_t addr = 0;

    bool ok() const { return status == TPU_ERR_NONE; }
};

inline constexpr Fault kOk{};

inline Fault make_fault(uint32_t status, uint64_t addr = 0) {
    return Fault{status, addr};
}

} // namespace tpu::engine
