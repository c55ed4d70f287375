// SPDX-License-Identifier: MIT
// train_mpi.cpp - tpu-train-mpi: tpu-train's data-parallel training over every card of a pod of
// server VMs, one Open MPI rank a card (tools/pod/README.md): `mpirun -np <cards> tpu-train-mpi
// <tpu-train's options>`. MPI bootstraps each rank's card and the communicator
// (mpi_bootstrap.hpp) and gathers a step's losses (mpi_rank_group.hpp); the gradients go over the
// cards' links. Each rank trains its share of every global batch as the same rank of
// `tpu-train --cards <cards>` does in one process (the same losses, bit for bit:
// data_parallel.hpp). Rank 0 alone prints (the other ranks' stdout goes to /dev/null; errors to
// stderr), writes the curves, the checkpoint and the evaluation. A failure ends the job: the rank
// says why and, for a failure while training, once the communicator's timeout has passed (by which
// the other ranks' collectives have failed and reported too), aborts it (MPI_Abort, exit status 1);
// 2 for bad arguments.
#include "card_run.hpp"
#include "mpi_bootstrap.hpp"
#include "mpi_rank_group.hpp"

#include <CLI/CLI.hpp>
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <stdexcept>

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
    MPI_Init(&argc, &argv);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        int world = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &world);
        const int rc = world == 0 ? app.exit(e) : (e.get_exit_code() != 0 ? 2 : 0);
        MPI_Finalize();
        return rc == 0 ? 0 : 2;
    }
    const std::chrono::milliseconds timeout(timeout_ms);
    tpu::pod::MpiRankGroup group(tpu::pod::bootstrap("tpu-train-mpi", timeout));
    if (group.me().world != 0 && std::freopen("/dev/null", "w", stdout) == nullptr)
        tpu::pod::fail(group.me(), "cannot send stdout to /dev/null");
    o.cards = group.size();
    int status = 1;
    try {
        status = tpu_train::run(o, &group);
    } catch (const std::logic_error &e) { // a bad option (std::invalid_argument): every rank's
        tpu::pod::fail(group.me(), e.what());
    } catch (const std::exception &e) {
        tpu::pod::fail(group.me(), e.what(), timeout);
    }
    MPI_Finalize();
    return status;
}
