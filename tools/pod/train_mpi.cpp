// SPDX-License-Identifier: MIT
// train_mpi.cpp - tpu-train-mpi: tpu-train's data-parallel training over every card of a pod of
// server VMs, one Open MPI rank a card (tools/pod/README.md): `mpirun -np <cards> tpu-train-mpi
// <tpu-train's options>`. MPI only bootstraps each rank's card and the communicator
// (mpi_bootstrap.hpp) and tells the ranks of a rank's failure; everything the training
// exchanges goes over the cards' links (the gradients' all-reduces and rank_group.hpp's
// exchanges). Each rank trains its share of every global batch as the same rank of `tpu-train
// --cards <cards>` does in one process (the same losses, bit for bit: data_parallel.hpp). Rank 0
// alone prints (the other ranks' stdout goes to /dev/null; errors to stderr) and writes the
// curves, the checkpoint and the evaluation. A failure ends the job: the rank says why, tells
// the other ranks (each then stops saying so: mpi_bootstrap.hpp's FailureWatch) and, for a
// failure while training, once the communicator's timeout has passed, aborts it (MPI_Abort,
// exit status 1); 2 for bad arguments.
#include "card_run.hpp"
#include "mpi_bootstrap.hpp"
#include "rank_group.hpp"

#include <CLI/CLI.hpp>
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <vector>

int main(int argc, char **argv) {
    tpu_train::Options o;
    std::uint32_t timeout_ms = 30000;
    CLI::App app{"tpu-train-mpi: tpu-train's data-parallel training, one MPI rank per card of a "
                 "pod (mpirun -np <cards> tpu-train-mpi ...)"};
    tpu_train::add_card_options(app, o);
    app.add_option("--timeout-ms", timeout_ms,
                   "the communicator's timeout: a collective not ended by then fails the run")
        ->check(CLI::Range(100u, 3600000u))
        ->capture_default_str();
    int threads = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &threads);
    if (const int rc = tpu::pod::parse_on_every_rank(app, argc, argv); rc >= 0)
        return rc;
    const std::chrono::milliseconds timeout(timeout_ms);
    tpu::pod::PodRank pod = tpu::pod::bootstrap("tpu-train-mpi", timeout);
    if (threads < MPI_THREAD_MULTIPLE)
        tpu::pod::fail(pod.me, "this MPI offers no MPI_THREAD_MULTIPLE (the failure watch's)");
    if (pod.me.world != 0 && std::freopen("/dev/null", "w", stdout) == nullptr)
        tpu::pod::fail(pod.me, "cannot send stdout to /dev/null");
    // bootstrap() checked that the ranks' card ranks are the fabric's, each once.
    std::vector<tpu_train::RankCard> cards(pod.places.size());
    for (const tpu::pod::RankPlace &p : pod.places)
        cards.at(p.fabric) = {p.x, p.y, p.host};
    o.cards = cards.size();
    int status = 1;
    try {
        const tpu::pod::FailureWatch watch(pod.me, timeout);
        tpu_train::RankGroup group(pod.card, pod.comm, std::move(cards));
        status = tpu_train::run(o, &group);
    } catch (const std::logic_error &e) { // a bad option (std::invalid_argument): every rank's
        tpu::pod::fail(pod.me, e.what());
    } catch (const std::exception &e) {
        tpu::pod::fail(pod.me, e.what(), timeout);
    }
    MPI_Finalize();
    return status;
}
