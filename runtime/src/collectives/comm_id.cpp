// SPDX-License-Identifier: MIT
// comm_id.cpp - tpurt::CommId::make(): a communicator's random name.
#include "tpurt/collectives.hpp"

#include <random>

namespace tpurt {

CommId CommId::make() {
    std::random_device random;
    CommId id;
    for (std::uint8_t &byte : id.bytes)
        byte = static_cast<std::uint8_t>(random());
    return id;
}

} // namespace tpurt
