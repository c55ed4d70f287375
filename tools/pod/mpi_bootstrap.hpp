// SPDX-License-Identifier: MIT
// mpi_bootstrap.hpp - what every MPI program over a pod's cards does first, one rank a card
// (tpu-pod-allreduce, tpu-train-mpi; tools/pod/README.md): MPI only bootstraps. Each rank opens
// the card of its local rank among its VM's fabric cards, rank 0 makes the CommId and
// MPI_Bcast hands it out, every rank joins the communicator (Communicator::init_rank at its
// card's fabric rank), and every rank learns each rank's host, card rank and coordinates. A
// failure prints why, naming the rank, tells the other ranks, and ends the job (fail():
// MPI_Abort); a FailureWatch stops a rank as soon as another rank has failed.
#pragma once

#include <tpurt/collectives.hpp>
#include <tpurt/device.hpp>

#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace tpu::pod {

// One rank as the messages name it.
struct Rank {
    std::string program;      // e.g. "tpu-pod-allreduce"
    int world = 0, size = 1;  // MPI
    std::uint32_t fabric = 0; // the communicator's rank: the card's place on the fabric's ring
    std::string host;
};

// Prints "<program>: rank <world> on <host> (card rank <fabric>): <what>" on stderr, sends that
// line to every other rank (for their FailureWatch; waiting at most a second for it to leave)
// and aborts the job (MPI_Abort, exit status 1). `linger`: how long to wait first, so that the
// other ranks, which the same failure ends within the communicator's timeout or their
// FailureWatch at once, report their own error before MPI_Abort kills them.
[[noreturn]] void fail(const Rank &me, const std::string &what,
                       std::chrono::milliseconds linger = std::chrono::milliseconds(0));

// A thread that takes another rank's fail() line (polling an MPI_Irecv every 20 ms: no busy
// wait) and then fails this rank too: "stopped: <that line>", lingering `linger`. A rank whose
// card waits on a neighbour that stopped would otherwise wait for the communicator's timeout,
// and mpirun may end it first when a VM dies. Needs MPI_THREAD_MULTIPLE (MPI_Init_thread).
// Destroy it before MPI_Finalize.
class FailureWatch {
  public:
    FailureWatch(const Rank &me, std::chrono::milliseconds linger);
    ~FailureWatch();
    FailureWatch(const FailureWatch &) = delete;
    FailureWatch &operator=(const FailureWatch &) = delete;

  private:
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

// Where a rank's card sits, as every rank learns it.
struct RankPlace {
    std::uint32_t fabric = 0; // its card rank
    std::uint32_t x = 0, y = 0;
    std::string host;
};

struct PodRank {
    Rank me;
    tpurt::Device card;
    tpurt::Communicator comm;
    std::vector<RankPlace> places; // per MPI rank
};

// Parses the command line on every rank, after MPI_Init: -1 to go on, else the status to exit
// with once MPI is finalized (done here): 0 for --help, 2 for bad arguments (rank 0 prints them).
int parse_on_every_rank(CLI::App &app, int argc, char **argv);

// The bootstrap above, after MPI_Init, on every rank: one rank per fabric card (checked: a
// clear error otherwise), the communicator with `timeout`. Any failure: fail().
PodRank bootstrap(const std::string &program, std::chrono::milliseconds timeout);

} // namespace tpu::pod
