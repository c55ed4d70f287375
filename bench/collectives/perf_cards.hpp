// SPDX-License-Identifier: MIT
// perf_cards.hpp - the cards tpu-collectives-perf runs on: the cards of the fabric behind tpu.ko
// in coordinate order, or in-process cards on a fabric of their own.
#pragma once

#include <tpurt/device.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace tpu::bench {

// The first `cards` cards on an inter-chip fabric (0: all of them), ordered by coordinate (y,
// then x). Throws tpurt::Error if there are fewer.
std::vector<tpurt::Device> fabric_cards(std::uint32_t cards);

// In-process link figures.
struct InProcessLinks {
    std::uint32_t link_gbps = 400, hop_ns = 1000;
    std::uint32_t y_link_gbps = 0, y_hop_ns = 0; // a torus's y links; 0: the x links'
};
// `cards` in-process cards joined as `topology` ("ring": a ring of them; "torus2d": 2 x cards/2)
// with the given link figures, one engine thread each.
std::vector<tpurt::Device> in_process_cards(std::uint32_t cards, const std::string &topology,
                                            const InProcessLinks &links);

} // namespace tpu::bench
