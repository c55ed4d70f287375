// SPDX-License-Identifier: MIT
// ring.cpp - the ring of links through a communicator's cards (ring.hpp): a depth-first search
// of the fabric's links from the lowest coordinate, neighbours in port order.
#include "collectives/ring.hpp"

#include "tpurt/error.hpp"

#include <algorithm>
#include <string>

namespace tpurt::detail {

namespace {

// Steps the search may take before it gives up (a fabric of 64 x 64 cards has 4096).
constexpr std::uint64_t max_search_steps = 1u << 22;

bool same_fabric(const IciPlace &a, const IciPlace &b) {
    return a.topology == b.topology && a.dim_x == b.dim_x && a.dim_y == b.dim_y &&
           a.ports == b.ports;
}

// The card of `places` at the neighbour of places[from] through `port`, or -1.
long neighbour(std::span<const IciPlace> places, std::uint32_t from, std::uint32_t port) {
    const IciPlace &p = places[from];
    for (std::size_t i = 0; i < places.size(); ++i)
        if (places[i].x == p.neighbour_x(port) && places[i].y == p.neighbour_y(port))
            return static_cast<long>(i);
    return -1;
}

bool adjacent(std::span<const IciPlace> places, std::uint32_t a, std::uint32_t b) {
    for (std::uint32_t port = 0; port < places[a].ports; ++port)
        if (neighbour(places, a, port) == static_cast<long>(b))
            return true;
    return false;
}

struct Search {
    std::span<const IciPlace> places;
    std::vector<std::uint32_t> path;
    std::vector<bool> taken;
    std::uint64_t steps = 0;

    bool extend() {
        if (++steps > max_search_steps)
            return false;
        const std::uint32_t last = path.back();
        if (path.size() == places.size())
            return adjacent(places, last, path.front());
        for (std::uint32_t port = 0; port < places[last].ports; ++port) {
            const long next = neighbour(places, last, port);
            if (next < 0 || taken[next])
                continue;
            taken[next] = true;
            path.push_back(static_cast<std::uint32_t>(next));
            if (extend())
                return true;
            path.pop_back();
            taken[next] = false;
        }
        return false;
    }
};

std::string coordinate(const IciPlace &p) {
    return p.topology == TPU_ICI_TOPO_TORUS2D ? std::to_string(p.x) + ":" + std::to_string(p.y)
                                              : std::to_string(p.x);
}

} // namespace

std::vector<std::uint32_t> ring_order(std::span<const IciPlace> places) {
    if (places.size() == 1)
        return {0};
    for (const IciPlace &p : places) {
        if (!p.on_fabric())
            throw Error(ErrorCode::InvalidArgument,
                        "a communicator of several cards needs cards on an inter-chip fabric "
                        "(CAPS.ICI and a tpu-ici object); a card is on none");
        if (!same_fabric(p, places[0]))
            throw Error(ErrorCode::InvalidArgument,
                        "a communicator's cards must be on one fabric; card at " + coordinate(p) +
                            " is on another than the card at " + coordinate(places[0]));
    }
    for (std::size_t i = 0; i < places.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (places[i].x == places[j].x && places[i].y == places[j].y)
                throw Error(ErrorCode::InvalidArgument,
                            "a communicator takes each card once; the card at " +
                                coordinate(places[i]) + " is given twice");
    Search search{places, {}, std::vector<bool>(places.size())};
    const auto first =
        std::min_element(places.begin(), places.end(), [](const IciPlace &a, const IciPlace &b) {
            return a.y != b.y ? a.y < b.y : a.x < b.x;
        });
    const auto start = static_cast<std::uint32_t>(first - places.begin());
    search.path.push_back(start);
    search.taken[start] = true;
    if (!search.extend())
        throw Error(ErrorCode::InvalidArgument,
                    "no ring of links joins the communicator's " + std::to_string(places.size()) +
                        " cards: each must be a neighbour of the next, around a cycle");
    return search.path;
}

std::vector<IciPlace> fabric_places(const IciPlace &place) {
    std::vector<IciPlace> all;
    for (std::uint32_t y = 0; y < place.dim_y; ++y)
        for (std::uint32_t x = 0; x < place.dim_x; ++x) {
            IciPlace p = place;
            p.x = x;
            p.y = y;
            all.push_back(p);
        }
    return all;
}

std::vector<RingPorts> ring_ports(std::span<const IciPlace> places,
                                  std::span<const std::uint32_t> ring) {
    const std::size_t n = ring.size();
    std::vector<RingPorts> ports(n);
    if (n == 1)
        return ports;
    for (std::size_t q = 0; q < n; ++q) {
        const std::uint32_t card = ring[q], next = ring[(q + 1) % n];
        std::uint32_t port = 0;
        while (neighbour(places, card, port) != static_cast<long>(next))
            ++port;
        ports[q].send_port = port;
        ports[(q + 1) % n].recv_port = port ^ 1;
    }
    return ports;
}

} // namespace tpurt::detail
