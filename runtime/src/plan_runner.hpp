// SPDX-License-Identifier: MIT
// plan_runner.hpp - runs the programs of a compiled plan (matmul, dense layer, convolution) on
// a device with a bounded number of jobs in flight and sums their statistics.
#pragma once

#include "tpurt/matmul.hpp"
#include "tpurt/matmul_compiler.hpp"

#include <chrono>
#include <span>

namespace tpurt::detail {

// Submits the programs (each reading or writing `buffers`), waits for all of them and
// returns their summed statistics; `wall` runs from the first submission to the last end.
MatmulStats run_programs(Device &device, std::span<const Program> programs,
                         std::span<const Buffer *const> buffers, std::chrono::nanoseconds timeout);

} // namespace tpurt::detail
