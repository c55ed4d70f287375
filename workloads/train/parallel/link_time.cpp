// SPDX-License-Identifier: MIT
// link_time.cpp - the modelled send time of a rank's ports in an all-reduce (link_time.hpp).
#include "link_time.hpp"

#include <tpurt/error.hpp>

#include <string>

namespace tpu_train {

std::uint32_t port_to(const tpurt::IciPlace &ici, std::uint32_t x, std::uint32_t y,
                      std::uint32_t not_port) {
    std::uint32_t found = ici.ports;
    for (std::uint32_t p = ici.ports; p-- > 0;)
        if (ici.neighbour_x(p) == x && ici.neighbour_y(p) == y &&
            (found == ici.ports || p != not_port))
            found = p;
    return found;
}

std::array<double, 4> all_reduce_port_ns(const tpurt::Communicator &comm,
                                         std::span<const RankCard> cards, std::uint32_t rank,
                                         const tpurt::IciPlace &ici, std::uint64_t bytes) {
    std::array<double, 4> ns{};
    const std::uint32_t p = comm.nranks();
    if (p < 2 || bytes == 0)
        return ns;
    if (cards.size() != p || rank >= p || ici.ports > ns.size() || ici.link_gbps == 0)
        throw tpurt::Error(tpurt::ErrorCode::InvalidArgument,
                           "all_reduce_port_ns: " + std::to_string(cards.size()) +
                               " cards and rank " + std::to_string(rank) + " for " +
                               std::to_string(p) + " ranks");
    const double b = static_cast<double>(bytes);
    // `steps` ring steps of an all-reduce's reduce-scatter and as many of its all-gather, each
    // one latency and one chunk, on `port` (a torus's y ports at the y links' figures, spec 2.4).
    const auto add = [&](std::uint32_t port, double steps, double chunk) {
        const bool y = port >= 2 && ici.y_link_gbps != 0;
        const double alpha = y ? ici.y_hop_ns : ici.hop_ns;
        const double beta = 8.0 / (y ? ici.y_link_gbps : ici.link_gbps);
        if (port < ns.size())
            ns[port] += 2 * steps * (alpha + chunk * beta);
    };
    const tpurt::CollectiveAlgorithm algorithm = comm.algorithm(bytes);
    if (algorithm == tpurt::CollectiveAlgorithm::Torus2d ||
        algorithm == tpurt::CollectiveAlgorithm::Hierarchical) {
        // Lanes 0 and 1 along x (ports 0, 1) then y (2, 3); lanes 2 and 3 (Torus2d on a square)
        // along y then x.
        const tpurt::CommShape shape = comm.shape(algorithm);
        const double px = shape.size[0], py = shape.size[1];
        const double lanes = px == py && algorithm == tpurt::CollectiveAlgorithm::Torus2d ? 4 : 2;
        for (std::uint32_t lane = 0; lane < lanes; ++lane) {
            const bool x_first = lane < 2;
            const std::uint32_t dir = lane % 2; // 0: + (ports 0, 2), 1: - (ports 1, 3)
            const double first = x_first ? px : py, second = x_first ? py : px;
            add((x_first ? 0 : 2) + dir, first - 1, b / (lanes * first));
            add((x_first ? 2 : 0) + dir, second - 1, b / (lanes * first * second));
        }
        return ns;
    }
    // A ring: to the card at the next ring position (and, bidirectional, the previous one).
    const std::vector<std::uint32_t> &pos = comm.ring_positions();
    const auto at = [&](std::uint32_t position) -> const RankCard & {
        for (std::uint32_t r = 0; r < p; ++r)
            if (pos[r] == position % p)
                return cards[r];
        return cards[rank];
    };
    const RankCard &next = at(pos[rank] + 1), &prev = at(pos[rank] + p - 1);
    const std::uint32_t next_port = port_to(ici, next.x, next.y);
    if (algorithm == tpurt::CollectiveAlgorithm::BidirectionalRing) {
        add(next_port, p - 1, b / (2.0 * p));
        add(port_to(ici, prev.x, prev.y, next_port), p - 1, b / (2.0 * p));
    } else {
        add(next_port, p - 1, b / p);
    }
    return ns;
}

} // namespace tpu_train
