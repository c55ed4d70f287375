// SPDX-License-Identifier: MIT
// device_in_process.cpp - the host conformance test's devices: the card's engine in the process
// with the QEMU card's defaults (128 x 128 array, 8 MiB unified buffer, 4 MiB accumulators), and
// a small card (32 x 32 array, 512 KiB unified buffer, 64 KiB accumulators) on which the same
// shapes cross many more tiles of the array and of both memories.
#include "conformance.hpp"

namespace conformance {

std::span<const TestDevice> devices() {
    static tpurt::Device card = tpurt::Device::open_in_process({});
    static tpurt::Device small = tpurt::Device::open_in_process(
        {.mxu_rows = 32, .mxu_cols = 32, .ub_bytes = 512u << 10, .acc_bytes = 64u << 10});
    static const TestDevice all[] = {{"the QEMU card's engine", &card},
                                     {"a 32 x 32 engine with 512 KiB / 64 KiB memories", &small}};
    return all;
}

} // namespace conformance
