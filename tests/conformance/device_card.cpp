// SPDX-License-Identifier: MIT
// device_card.cpp - the guest conformance test's device: the first card (/dev/accel/accel0)
// through tpu.ko.
#include "conformance.hpp"

namespace conformance {

tpurt::Device &device() {
    static tpurt::Device dev = tpurt::Device::open(0);
    return dev;
}

} // namespace conformance
