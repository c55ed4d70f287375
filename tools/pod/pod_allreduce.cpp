// SPDX-License-Identifier: MIT
// pod_allreduce.cpp - tpu-pod-allreduce: an all-reduce over every card of a pod of server VMs,
// one Open MPI rank per card (tools/pod/README.md). MPI only bootstraps (mpi_bootstrap.hpp: each
// rank's card and the communicator) and the all-reduces run over the cards' links. Each dtype's
// result is checked exact against a sum every rank computes itself from all ranks' inputs (fp32:
// integers small enough that any order of the sum is exact; int32: wrapping), and rank 0 prints the
// slowest rank's modelled card time next to the alpha-beta time of the algorithm
// (bench/collectives/perf_model.hpp). --repeat N then runs N more all-reduces (the failure test
// kills a VM during them). A rank whose collective fails prints why and, once the communicator's
// timeout has passed (by which the other ranks' collectives have failed and reported too), aborts
// the job (MPI_Abort): exit status 1, as for a wrong element; 2 for bad arguments.
#include "mpi_bootstrap.hpp"
#include "perf_model.hpp"

#include <tpurt/collectives.hpp>
#include <tpurt/error.hpp>
#include <tpurt/profile.hpp>
#include <tpurt/stream.hpp>
#include <tpurt/testing/raw_values.hpp>

#include <CLI/CLI.hpp>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

using tpu::bench::CollectiveOp;

struct Options {
    std::uint64_t bytes = 1 << 20;
    std::uint32_t iters = 3;
    std::uint64_t repeat = 0;
    std::uint32_t timeout_ms = 30000;
};

// Rank r's element i: fp32 an integer in [-1000, 1000] (sums of up to 2^14 ranks are exact in
// any order), int32 any 32 bits; the same on every rank, so each can compute the sum itself.
std::uint32_t input_word(tpurt::DType type, std::uint32_t rank, std::uint64_t i) {
    std::uint64_t z = (std::uint64_t{rank} << 40) ^ i ^ 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    if (type == tpurt::DType::Int32)
        return static_cast<std::uint32_t>(z);
    const float v = static_cast<float>(static_cast<int>(z % 2001) - 1000);
    std::uint32_t w;
    std::memcpy(&w, &v, sizeof w);
    return w;
}

tpurt::RawValues inputs(tpurt::DType type, std::uint32_t rank, std::uint64_t count) {
    tpurt::RawValues v(count);
    for (std::uint64_t i = 0; i < count; ++i)
        v[i] = input_word(type, rank, i);
    return v;
}

// The all-reduce's result, summed here in rank order (exact: see input_word()).
tpurt::RawValues reference_sum(tpurt::DType type, std::uint32_t nranks, std::uint64_t count) {
    tpurt::RawValues sum(count);
    for (std::uint64_t i = 0; i < count; ++i) {
        std::uint32_t acc = 0;
        float f = 0;
        for (std::uint32_t r = 0; r < nranks; ++r) {
            const std::uint32_t w = input_word(type, r, i);
            if (type == tpurt::DType::Int32) {
                acc += w;
            } else {
                float v;
                std::memcpy(&v, &w, sizeof v);
                f += v;
            }
        }
        if (type != tpurt::DType::Int32)
            std::memcpy(&acc, &f, sizeof acc);
        sum[i] = acc;
    }
    return sum;
}

using tpu::pod::fail;
using tpu::pod::Rank;

// One all-reduce of `send` into `recv` on the rank's stream, waited for.
void all_reduce(tpurt::Communicator &comm, tpurt::Stream &stream, const tpurt::Tensor &send,
                const tpurt::Tensor &recv) {
    tpurt::Stream *s = &stream;
    comm.all_reduce({&s, 1}, {&send, 1}, {&recv, 1}, tpurt::ReduceKind::Sum);
    stream.synchronize();
}

// The row of `type`: a checked all-reduce, `iters` timed ones, checked again; rank 0 prints it.
// Returns the wrong elements of all ranks (on rank 0; 0 elsewhere).
std::uint64_t run_row(const Rank &me, tpurt::Device &card, tpurt::Communicator &comm,
                      tpurt::DType type, const Options &o, const tpu::bench::LinkModel &link) {
    const tpu::bench::RowSize size =
        tpu::bench::row_size(CollectiveOp::AllReduce, o.bytes, comm.nranks(), 4);
    tpurt::Stream stream(card);
    const tpurt::Tensor send = tpurt::raw_tensor(card, type, inputs(type, me.fabric, size.count));
    const tpurt::Tensor recv = tpurt::raw_tensor(card, type, tpurt::RawValues(size.count, 0));
    const tpurt::RawValues want = reference_sum(type, comm.nranks(), size.count);
    const auto wrong_now = [&] {
        const tpurt::RawValues got = tpurt::read_raw(recv);
        std::uint64_t n = 0;
        for (std::uint64_t i = 0; i < size.count; ++i)
            n += got[i] != want[i];
        return n;
    };
    std::uint64_t wrong = 0;
    using Clock = std::chrono::steady_clock;
    Clock::time_point start;
    try {
        all_reduce(comm, stream, send, recv);
        wrong = wrong_now();
        tpurt::profiler::clear();
        start = Clock::now();
        for (std::uint32_t i = 0; i < o.iters; ++i)
            all_reduce(comm, stream, send, recv);
    } catch (const tpurt::Error &e) {
        fail(me, std::string("all-reduce failed: ") + e.what());
    }
    double wall_us = std::chrono::duration<double, std::micro>(Clock::now() - start).count() /
                     std::max<std::uint32_t>(o.iters, 1);
    wrong += wrong_now();
    std::uint64_t cycles = 0;
    for (const tpurt::OpRecord &record : tpurt::profiler::snapshot().ops)
        if (record.name.starts_with(tpu::bench::op_name(CollectiveOp::AllReduce)))
            cycles = std::max(cycles, record.cycles);
    double modelled_us = static_cast<double>(cycles) / card.info().clock_mhz;
    std::uint64_t all_wrong = 0;
    double slowest[2] = {0, 0}, mine[2] = {modelled_us, wall_us};
    MPI_Reduce(&wrong, &all_wrong, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(mine, slowest, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (me.world == 0) {
        const tpurt::CollectiveAlgorithm algorithm = comm.algorithm(size.bytes);
        const double pred =
            tpu::bench::alpha_beta_us(CollectiveOp::AllReduce, size.bytes, comm.nranks(), link,
                                      tpu::bench::lane_model(algorithm, comm.shape(algorithm)));
        std::printf("  %10llu %10llu %5s %10s | %10.2f %10.2f %6.3f | %10.1f | %6llu\n",
                    static_cast<unsigned long long>(size.bytes),
                    static_cast<unsigned long long>(size.count), tpurt::dtype_name(type),
                    tpurt::algorithm_name(algorithm), slowest[0], pred, slowest[0] / pred,
                    slowest[1], static_cast<unsigned long long>(all_wrong));
        std::fflush(stdout);
    }
    return all_wrong;
}

// `o.repeat` more fp32 all-reduces; rank 0 says when the first has ended (the failure test's
// cue) and every rank how many it ran.
void repeat(const Rank &me, tpurt::Device &card, tpurt::Communicator &comm, const Options &o) {
    const std::uint64_t count =
        tpu::bench::row_size(CollectiveOp::AllReduce, o.bytes, comm.nranks(), 4).count;
    tpurt::Stream stream(card);
    const tpurt::Tensor send =
        tpurt::raw_tensor(card, tpurt::DType::Fp32, inputs(tpurt::DType::Fp32, me.fabric, count));
    const tpurt::Tensor recv =
        tpurt::raw_tensor(card, tpurt::DType::Fp32, tpurt::RawValues(count, 0));
    for (std::uint64_t i = 0; i < o.repeat; ++i) {
        try {
            all_reduce(comm, stream, send, recv);
        } catch (const tpurt::Error &e) {
            fail(me,
                 "all-reduce " + std::to_string(i + 1) + " of " + std::to_string(o.repeat) +
                     " failed: " + e.what(),
                 std::chrono::milliseconds(o.timeout_ms));
        }
        if (i == 0 && me.world == 0) {
            std::printf("tpu-pod-allreduce: repeating %llu all-reduces\n",
                        static_cast<unsigned long long>(o.repeat));
            std::fflush(stdout);
        }
    }
}

int run(const Options &o) {
    tpu::pod::PodRank pod =
        tpu::pod::bootstrap("tpu-pod-allreduce", std::chrono::milliseconds(o.timeout_ms));
    const Rank &me = pod.me;
    tpurt::Device &card = pod.card;
    tpurt::Communicator &comm = pod.comm;
    const tpurt::DeviceInfo &info = card.info();
    const tpu::bench::LinkModel link = tpu::bench::link_model(info.ici);
    if (me.world == 0) {
        std::printf("# tpu-pod-allreduce: %d ranks, a %s fabric %ux%u; links %u Gbit/s each way, "
                    "hop %u ns (y links, between the VMs: %u Gbit/s, %u ns); card clock %u MHz; "
                    "timeout %u ms\n",
                    me.size, info.ici.topology == TPU_ICI_TOPO_TORUS2D ? "torus2d" : "ring",
                    info.ici.dim_x, info.ici.dim_y, link.link_gbps, link.hop_ns,
                    info.ici.y_link_gbps, info.ici.y_hop_ns, info.clock_mhz, o.timeout_ms);
        for (int r = 0; r < me.size; ++r)
            std::printf("#   rank %d on %s: card rank %u\n", r, pod.places[r].host.c_str(),
                        pod.places[r].fabric);
        std::printf("# model = the slowest rank's card cycles at the clock; alpha-beta = "
                    "perf_model.hpp's time of the algorithm; wall = the slowest rank's mean\n");
        std::printf("# %10s %10s %5s %10s | %10s %10s %6s | %10s | %6s\n", "size", "count", "type",
                    "algorithm", "model(us)", "a-b(us)", "ratio", "wall(us)", "#wrong");
        std::fflush(stdout);
    }
    tpurt::profiler::start();
    std::uint64_t wrong = 0;
    for (const tpurt::DType type : {tpurt::DType::Fp32, tpurt::DType::Int32})
        wrong += run_row(me, card, comm, type, o, link);
    repeat(me, card, comm, o);
    if (me.world == 0)
        std::printf("# wrong elements: %llu\n", static_cast<unsigned long long>(wrong));
    int status = wrong == 0 ? 0 : 1;
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return status;
}

} // namespace

int main(int argc, char **argv) {
    Options o;
    CLI::App app{"tpu-pod-allreduce: an all-reduce over every card of a pod, one MPI rank per card "
                 "(mpirun -np <cards> tpu-pod-allreduce)"};
    app.add_option("-b,--bytes", o.bytes, "bytes of each rank's buffer")
        ->check(CLI::Range(std::uint64_t{16}, std::uint64_t{256} << 20));
    app.add_option("-n,--iters", o.iters, "timed all-reduces per type")
        ->check(CLI::Range(1u, 1000u));
    app.add_option("--repeat", o.repeat, "more fp32 all-reduces after the checked ones");
    app.add_option("--timeout-ms", o.timeout_ms, "the communicator's timeout")
        ->check(CLI::Range(100u, 3600000u));
    MPI_Init(&argc, &argv);
    if (const int rc = tpu::pod::parse_on_every_rank(app, argc, argv); rc >= 0)
        return rc;
    const int status = run(o);
    MPI_Finalize();
    return status;
}
