// SPDX-License-Identifier: MIT
// ici_cards.hpp - the guest's interconnect tests (test_ici, test_ici_remote): the cards on a
// fabric as tpu.ko's sysfs shows them, and the card's formula for a transfer's modelled time.
#pragma once

#include <tpurt/tpurt.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace guest {

// One card on a fabric: its runtime device, its sysfs directory and its x coordinate.
struct IciCard {
    std::unique_ptr<tpurt::Device> device;
    std::string sysfs;
    unsigned x = 0;
};

// The first line of a sysfs file, "" if it cannot be read.
std::string sysfs_read(const std::string &path);

// Every card of this guest on a fabric, ordered by x (a card on none, without ici/, is left out).
std::vector<IciCard> ici_cards();

// hops x latency + bytes / bandwidth in cycles, rounded up once (the card's formula).
std::uint64_t link_cycles(std::uint64_t bytes, std::uint64_t clock_mhz, std::uint64_t gbps,
                          std::uint64_t hop_ns);

} // namespace guest
