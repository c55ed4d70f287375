// SPDX-License-Identifier: MIT
// ici_cards.cpp - the interconnect tests' view of the cards (ici_cards.hpp).
#include "ici_cards.hpp"

#include <algorithm>
#include <fstream>

namespace guest {

std::string sysfs_read(const std::string &path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

std::vector<IciCard> ici_cards() {
    std::vector<IciCard> cards;
    const auto list = tpurt::Device::list();
    for (unsigned i = 0; i < list.size(); i++) {
        IciCard c;
        c.sysfs = "/sys/bus/pci/devices/" + list[i].pci_slot;
        const std::string coord = sysfs_read(c.sysfs + "/ici/coord");
        if (coord.empty())
            continue;
        c.x = std::stoul(coord);
        c.device = std::make_unique<tpurt::Device>(tpurt::Device::open(i));
        cards.push_back(std::move(c));
    }
    std::sort(cards.begin(), cards.end(),
              [](const IciCard &a, const IciCard &b) { return a.x < b.x; });
    return cards;
}

std::uint64_t link_cycles(std::uint64_t bytes, std::uint64_t clock_mhz, std::uint64_t gbps,
                          std::uint64_t hop_ns) {
    const unsigned __int128 num = ((unsigned __int128)hop_ns * gbps + bytes * 8) * clock_mhz;
    const unsigned __int128 den = (unsigned __int128)gbps * 1000;
    return std::uint64_t((num + den - 1) / den);
}

} // namespace guest
