// SPDX-License-Identifier: MIT
// device_card.cpp - the guest conformance test's device: the first card (/dev/accel/accel0)
// through tpu.ko.
#include "conformance.hpp"

namespace conformance {

std::span<const TestDevice> devices() {
    static tpurt::Device card = tpurt::Device::open(0);
    static const TestDevice all[] = {{"card 0", &card}};
    return all;
}

} // namespace conformance
