// SPDX-License-Identifier: MIT
// perf_cards.cpp - opening the benchmark's cards (perf_cards.hpp).
#include "perf_cards.hpp"

#include <tpurt/error.hpp>

#include <algorithm>

namespace tpu::bench {

std::vector<tpurt::Device> fabric_cards(std::uint32_t cards) {
    std::vector<tpurt::Device> found;
    const std::vector<tpurt::DeviceInfo> list = tpurt::Device::list();
    for (unsigned i = 0; i < list.size(); ++i)
        if (list[i].ici.on_fabric())
            found.push_back(tpurt::Device::open(i));
    std::sort(found.begin(), found.end(), [](const tpurt::Device &a, const tpurt::Device &b) {
        const tpurt::IciPlace &p = a.info().ici, &q = b.info().ici;
        return p.y != q.y ? p.y < q.y : p.x < q.x;
    });
    if (cards == 0)
        cards = static_cast<std::uint32_t>(found.size());
    if (cards < 2 || found.size() < cards)
        throw tpurt::Error(tpurt::ErrorCode::NoDevice,
                           std::to_string(found.size()) + " card(s) on an inter-chip fabric, " +
                               std::to_string(std::max(cards, 2u)) +
                               " wanted: boot with several joined cards (run-in-vm.sh --cards 4), "
                               "or use --in-process");
    found.erase(found.begin() + cards, found.end());
    return found;
}

std::vector<tpurt::Device> in_process_cards(std::uint32_t cards, const std::string &topology,
                                            const InProcessLinks &links) {
    const bool torus = topology == "torus2d";
    if (torus && cards % 2 != 0)
        throw tpurt::Error(tpurt::ErrorCode::InvalidArgument,
                           "a 2-D torus of 2 x cards/2 needs an even number of cards, not " +
                               std::to_string(cards));
    tpurt::FabricConfig fabric{.torus = torus,
                               .dim_x = torus ? 2 : cards,
                               .dim_y = torus ? cards / 2 : 1,
                               .link_gbps = links.link_gbps,
                               .hop_ns = links.hop_ns,
                               .y_link_gbps = torus ? links.y_link_gbps : 0,
                               .y_hop_ns = torus ? links.y_hop_ns : 0};
    return tpurt::Device::open_in_process_fabric(fabric, {.threads = 1});
}

} // namespace tpu::bench
