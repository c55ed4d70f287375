// SPDX-License-Identifier: MIT
// device_in_process.cpp - the host conformance test's device: the card's engine in the process
// with the QEMU card's defaults (128 x 128 array, 8 MiB unified buffer, 4 MiB accumulators).
#include "conformance.hpp"

namespace conformance {

tpurt::Device &device() {
    static tpurt::Device dev = tpurt::Device::open_in_process({});
    return dev;
}

} // namespace conformance
