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

// The tag of fail()'s lines to the other ranks.
constexpr int failure_tag = 0x7f1;
constexpr int failure_bytes = 1024;

// Prints `line` on stderr (on a line of its own: a progress line may be unfinished), lingers
// and aborts the job.
[[noreturn]] void abort_job(const std::string &line, std::chrono::milliseconds linger) {
    std::fprintf(stderr, "\n%s\n", line.c_str());
    std::fflush(stderr);
    std::this_thread::sleep_for(linger);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::_Exit(1);
}

std::string line_of(const Rank &me, const std::string &what) {
    return me.program + ": rank " + std::to_string(me.world) + " on " + me.host + " (card rank " +
           std::to_string(me.fabric) + "): " + what;
}

} // namespace

void fail(const Rank &me, const std::string &what, std::chrono::milliseconds linger) {
    std::string line = line_of(me, what);
    const std::string sent = line.substr(0, failure_bytes - 1);
    std::vector<MPI_Request> requests;
    for (int r = 0; r < me.size; ++r) {
        if (r == me.world)
            continue;
        requests.emplace_back();
        MPI_Isend(sent.data(), static_cast<int>(sent.size()), MPI_CHAR, r, failure_tag,
                  MPI_COMM_WORLD, &requests.back());
    }
    // Those to live ranks leave at once; those to dead ones never do.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    int sent_all = 0;
    while (!sent_all && std::chrono::steady_clock::now() < deadline) {
        MPI_Testall(static_cast<int>(requests.size()), requests.data(), &sent_all,
                    MPI_STATUSES_IGNORE);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    abort_job(line, linger);
}

FailureWatch::FailureWatch(const Rank &me, std::chrono::milliseconds linger)
    : thread_([this, me, linger] {
          std::vector<char> line(failure_bytes);
          MPI_Request request;
          MPI_Irecv(line.data(), failure_bytes, MPI_CHAR, MPI_ANY_SOURCE, failure_tag,
                    MPI_COMM_WORLD, &request);
          while (!stop_) {
              int got = 0;
              MPI_Status status;
              MPI_Test(&request, &got, &status);
              if (got) {
                  int n = 0;
                  MPI_Get_count(&status, MPI_CHAR, &n);
                  abort_job(line_of(me, "stopped: " + std::string(line.data(), n)), linger);
              }
              std::this_thread::sleep_for(std::chrono::milliseconds(20));
          }
          MPI_Cancel(&request);
          MPI_Wait(&request, MPI_STATUS_IGNORE);
      }) {}

FailureWatch::~FailureWatch() {
    stop_ = true;
    thread_.join();
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

int parse_on_every_rank(CLI::App &app, int argc, char **argv) {
    try {
        app.parse(argc, argv);
        return -1;
    } catch (const CLI::ParseError &e) {
        int world = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &world);
        const int rc = world == 0 ? app.exit(e) : (e.get_exit_code() != 0 ? 2 : 0);
        MPI_Finalize();
        return rc == 0 ? 0 : 2;
    }
}

} // namespace tpu::pod
