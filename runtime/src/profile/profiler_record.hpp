// SPDX-License-Identifier: MIT
// profiler_record.hpp - internal: how ops report to the process-wide profiler (profile.hpp).
#pragma once

#include "tpurt/profile.hpp"

#include <chrono>

namespace tpurt::detail {

// Microseconds from the profiler's time origin to `t`.
double profile_us(std::chrono::steady_clock::time_point t);
void record_op(OpRecord op);
void record_host(HostSpan span);

} // namespace tpurt::detail
