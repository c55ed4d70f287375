// SPDX-License-Identifier: MIT
// mpi_bootstrap.cpp - a pod rank's card and communicator, bootstrapped over MPI
// (mpi_bootstrap.hpp).
#include "mpi_bootstrap.hpp"

#include "perf_cards.hpp"

#include <tpurt/error.hpp>

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace tpu::pod {

namespace {

// This VM's cards on the fabric, ordered as on the fabric (y, then x); fabric_cards() wants two or
// more, a pod may have one card a VM.
std::vector<tpurt::Device> local_cards() {
    const std::vector<tpurt::DeviceInfo> list = tpurt::Device::list();
    const auto on_fabric = [](const tpurt::DeviceInfo &info) { return info.ici.on_fabric(); };
    const auto n = std::count_if(list.begin(), list.end(), on_fabric);
    if (n == 0)
        throw tpurt::Error(tpurt::ErrorCode::NoDevice, std::to_string(list.size()) +
                                                           " card(s) here, none on an inter-chip "
                                                           "fabric: run it in a pod (tools/pod)");
    if (n == 1) {
        const auto one = std::find_if(list.begin(), list.end(), on_fabric);
        return {tpurt::Device::open(static_cast<unsigned>(one - list.begin()))};
    }
    return tpu::bench::fabric_cards(0);
}

// This process's card: the card of its local rank among its host's (every rank of a host
// shares its memory: MPI_COMM_TYPE_SHARED).
tpurt::Device open_card(const Rank &me) {
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me.world, MPI_INFO_NULL, &local);
    int local_rank = 0, local_size = 1;
    MPI_Comm_rank(local, &local_rank);
    MPI_Comm_size(local, &local_size);
    MPI_Comm_free(&local);
    try {
        std::vector<tpurt::Device> cards = local_cards();
        if (cards.size() != static_cast<std::size_t>(local_size))
            fail(me, std::to_string(local_size) + " rank(s) on this host for " +
                         std::to_string(cards.size()) +
                         " card(s) on the fabric: start one rank per card (a hostfile with "
                         "slots=<cards> per host)");
        return cards[local_rank];
    } catch (const tpurt::Error &e) {
        fail(me, std::string("no card: ") + e.what());
    }
}

} // namespace

void fail(const Rank &me, const std::string &what, std::chrono::milliseconds linger) {
    std::fprintf(stderr, "%s: rank %d on %s (card rank %u): %s\n", me.program.c_str(), me.world,
                 me.host.c_str(), me.fabric, what.c_str());
    std::fflush(stderr);
    std::this_thread::sleep_for(linger);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::_Exit(1);
}

PodRank bootstrap(const std::string &program, std::chrono::milliseconds timeout) {
    Rank me;
    me.program = program;
    MPI_Comm_rank(MPI_COMM_WORLD, &me.world);
    MPI_Comm_size(MPI_COMM_WORLD, &me.size);
    std::array<char, 64> host{};
    gethostname(host.data(), host.size() - 1);
    me.host = host.data();

    tpurt::Device card = open_card(me);
    const tpurt::DeviceInfo &info = card.info();
    me.fabric = tpurt::Communicator::fabric_rank(info);
    const std::uint32_t fabric_cards = info.ici.dim_x * info.ici.dim_y;
    if (fabric_cards != static_cast<std::uint32_t>(me.size))
        fail(me, std::to_string(me.size) + " ranks for a fabric of " +
                     std::to_string(fabric_cards) + " cards: start one rank per card (-np " +
                     std::to_string(fabric_cards) + ")");

    // The id, from rank 0 to all; the collectives after it also mean every card's driver is up.
    tpurt::CommId id;
    if (me.world == 0)
        id = tpurt::CommId::make();
    MPI_Bcast(id.bytes.data(), static_cast<int>(id.bytes.size()), MPI_BYTE, 0, MPI_COMM_WORLD);
    const std::uint32_t mine[3] = {me.fabric, info.ici.x, info.ici.y};
    std::vector<std::uint32_t> places(3 * static_cast<std::size_t>(me.size));
    MPI_Allgather(mine, 3, MPI_UINT32_T, places.data(), 3, MPI_UINT32_T, MPI_COMM_WORLD);
    std::vector<char> hosts(static_cast<std::size_t>(me.size) * host.size());
    MPI_Allgather(host.data(), static_cast<int>(host.size()), MPI_CHAR, hosts.data(),
                  static_cast<int>(host.size()), MPI_CHAR, MPI_COMM_WORLD);
    std::vector<RankPlace> all;
    for (int r = 0; r < me.size; ++r)
        all.push_back({places[3 * r], places[3 * r + 1], places[3 * r + 2],
                       &hosts[static_cast<std::size_t>(r) * host.size()]});
    std::vector<std::uint32_t> sorted;
    for (const RankPlace &p : all)
        sorted.push_back(p.fabric);
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
        fail(me, "two ranks drive cards at the same fabric place: are the VMs' fabrics one?");

    tpurt::Communicator comm = [&] {
        try {
            return tpurt::Communicator::init_rank(card, me.size, id, me.fabric,
                                                  {.timeout = timeout});
        } catch (const tpurt::Error &e) {
            fail(me, std::string("no communicator: ") + e.what());
        }
    }();
    return {std::move(me), std::move(card), std::move(comm), std::move(all)};
}

} // namespace tpu::pod
