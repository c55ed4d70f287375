// SPDX-License-Identifier: MIT
// parallel_summary.cpp - a data-parallel run's summary, one process or one a card
// (parallel_summary.hpp).
#include "parallel_summary.hpp"

#include "link_time.hpp"

#include <tpurt/card/job.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace tpu_train {

namespace {

double modelled_ms(std::uint64_t cycles, const tpurt::DeviceInfo &info) {
    tpurt::JobStats j;
    j.cycles = cycles;
    return std::chrono::duration<double, std::milli>(j.modelled_time(info)).count();
}

// The rank whose card is at (x, y), or cards.size().
std::size_t rank_at(std::span<const RankCard> cards, std::uint32_t x, std::uint32_t y) {
    for (std::size_t r = 0; r < cards.size(); ++r)
        if (cards[r].x == x && cards[r].y == y)
            return r;
    return cards.size();
}

} // namespace

void print_parallel_summary(const ModelledSteps &m, const tpurt::DeviceInfo &info,
                            std::size_t cards) {
    if (m.steps == 0)
        return;
    const double step_ms = modelled_ms(m.step_cycles, info);
    const double compute_ms = modelled_ms(m.compute_cycles, info);
    const double comm_ms = step_ms - compute_ms;
    std::printf("training on %zu card%s: %.1f images/s in wall time, %.1f images/s in modelled "
                "card time (%llu steps)\n",
                cards, cards == 1 ? "" : "s", double(m.samples) / m.wall_seconds,
                step_ms > 0 ? double(m.samples) / (step_ms / 1000.0) : 0.0,
                static_cast<unsigned long long>(m.steps));
    if (cards == 1) {
        std::printf("modelled step %.3f ms\n", step_ms / double(m.steps));
        return;
    }
    std::printf("modelled step %.3f ms: compute %.3f ms, all-reduce %.3f ms (%.1f%% of the step); "
                "modelled weak-scaling efficiency %.1f%%\n",
                step_ms / double(m.steps), compute_ms / double(m.steps), comm_ms / double(m.steps),
                step_ms > 0 ? 100.0 * comm_ms / step_ms : 0.0,
                step_ms > 0 ? 100.0 * compute_ms / step_ms : 0.0);
}
void print_group_summary(RankGroup &group, const ModelledSteps &m, const tpurt::Communicator &comm,
                         std::span<const std::uint64_t> bucket_bytes,
                         const tpurt::DeviceInfo &info) {
    const std::vector<RankCard> &cards = group.cards();
    const std::size_t me = group.rank();
    // A step's modelled send time on each port, and which ports lead to another server.
    std::array<double, 4> port_ns{};
    for (const std::uint64_t bytes : bucket_bytes) {
        const std::array<double, 4> b =
            all_reduce_port_ns(comm, cards, static_cast<std::uint32_t>(me), info.ici, bytes);
        for (std::size_t p = 0; p < port_ns.size(); ++p)
            port_ns[p] += b[p];
    }
    double inside_ns = 0, between_ns = 0;
    std::uint64_t between_ports = 0; // a bit per port
    for (std::uint32_t p = 0; p < info.ici.ports && p < port_ns.size(); ++p) {
        const std::size_t peer = rank_at(cards, info.ici.neighbour_x(p), info.ici.neighbour_y(p));
        if (peer < cards.size() && cards[peer].host != cards[me].host) {
            between_ns += port_ns[p];
            between_ports |= 1u << p;
        } else {
            inside_ns += port_ns[p];
        }
    }
    const std::uint64_t mine[] = {m.own_samples,
                                  std::bit_cast<std::uint64_t>(m.wall_seconds),
                                  m.step_cycles,
                                  m.compute_cycles,
                                  std::bit_cast<std::uint64_t>(inside_ns),
                                  std::bit_cast<std::uint64_t>(between_ns),
                                  between_ports};
    constexpr std::size_t words = std::size(mine);
    const std::vector<std::uint64_t> all = group.all_gather(mine);
    if (me != 0 || m.steps == 0)
        return;
    ModelledSteps slowest = m;
    for (std::size_t r = 0; r < group.size(); ++r) {
        const std::uint64_t *w = &all[r * words];
        slowest.wall_seconds = std::max(slowest.wall_seconds, std::bit_cast<double>(w[1]));
        slowest.step_cycles = std::max(slowest.step_cycles, w[2]);
        slowest.compute_cycles = std::max(slowest.compute_cycles, w[3]);
    }
    std::printf("over the %zu ranks (the slowest rank's totals):\n", group.size());
    print_parallel_summary(slowest, info, group.size());
    std::printf("per rank: images/s of its rows in wall and modelled card time, its modelled step "
                "and all-reduce, and per step the modelled time its card's links send (summed "
                "over the ports; alpha-beta of the algorithm, link_time.hpp) inside its server "
                "and to other servers (ports):\n");
    std::printf("  %4s %-16s %7s %11s %12s %9s %14s %10s %19s\n", "rank", "host", "card",
                "wall img/s", "model img/s", "step ms", "all-reduce ms", "inside ms",
                "between servers ms");
    for (std::size_t r = 0; r < group.size(); ++r) {
        const std::uint64_t *w = &all[r * words];
        const double step_ms = modelled_ms(w[2], info) / double(m.steps);
        const double comm_ms = step_ms - modelled_ms(w[3], info) / double(m.steps);
        std::string ports;
        for (std::uint32_t p = 0; p < 4; ++p)
            if (w[6] >> p & 1)
                ports += (ports.empty() ? "" : " ") + std::to_string(p);
        const std::string card =
            "(" + std::to_string(cards[r].x) + "," + std::to_string(cards[r].y) + ")";
        std::printf("  %4zu %-16s %7s %11.1f %12.1f %9.3f %14.3f %10.4f %10.4f (%s)\n", r,
                    cards[r].host.c_str(), card.c_str(), double(w[0]) / std::bit_cast<double>(w[1]),
                    w[2] > 0 ? double(w[0]) / (modelled_ms(w[2], info) / 1000.0) : 0.0, step_ms,
                    comm_ms, std::bit_cast<double>(w[4]) / 1e6, std::bit_cast<double>(w[5]) / 1e6,
                    ports.empty() ? "none" : ports.c_str());
    }
}

} // namespace tpu_train
