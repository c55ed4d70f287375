// SPDX-License-Identifier: MIT
// ring.hpp - internal: the ring of links a communicator's ranks sit on, found from the cards'
// fabric coordinates (collectives.hpp, "Ring"), and each ring position's ports.
#pragma once

#include "tpurt/device_info.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace tpurt::detail {

// A ring position's ports: it sends to the next position on send_port and receives from the
// previous one on recv_port.
struct RingPorts {
    std::uint32_t send_port = 0;
    std::uint32_t recv_port = 0;
};

// The cards (indices into `places`) in ring order, starting with the lowest coordinate (y, then
// x), each a neighbour of the next and the last of the first; one card alone is a ring of one.
// Throws Error(InvalidArgument) if the cards are on different fabrics or no ring of links joins
// them.
std::vector<std::uint32_t> ring_order(std::span<const IciPlace> places);

// Every coordinate of the fabric `place` is on, x fastest: what ring_order() of the whole
// fabric takes.
std::vector<IciPlace> fabric_places(const IciPlace &place);

// The ports of each position of `ring` (ring_order()'s result over `places`).
std::vector<RingPorts> ring_ports(std::span<const IciPlace> places,
                                  std::span<const std::uint32_t> ring);

} // namespace tpurt::detail
