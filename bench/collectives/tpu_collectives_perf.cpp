// SPDX-License-Identifier: MIT
// tpu-collectives-perf - the collectives of tpurt::Communicator (all-reduce, reduce-scatter,
// all-gather, broadcast, all-to-all) timed like nccl-tests' all_reduce_perf: per op and size the
// modelled card time with its bus bandwidth, the alpha-beta prediction of the algorithm used and
// their ratio, the wall time with its bus bandwidth, and the wrong elements against the CPU
// reference; once, memcpy's bandwidth on the same machine, and each op's wall-time bus bandwidth at
// the largest size against it (the emulator's own cost). On the cards behind tpu.ko (in a guest) or
// on in-process cards
// (--in-process). Exits 1 if any element was wrong. See bench/README.md.
#include "host_memcpy.hpp"
#include "perf_cards.hpp"
#include "perf_model.hpp"
#include "perf_run.hpp"

#include <tpurt/collectives.hpp>
#include <tpurt/device.hpp>
#include <tpurt/error.hpp>
#include <tpurt/testing/comm_ranks.hpp>

#include <CLI/CLI.hpp>
#include <drm/tpu_accel.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

using namespace tpu::bench;

struct Options {
    std::string op = "all";
    std::uint64_t min_bytes = 8, max_bytes = 64 << 20, factor = 2;
    std::string dtype = "fp32";
    std::uint32_t iters = 5, cards = 0;
    bool in_process = false;
    std::string topology = "ring";
    std::uint32_t link_gbps = 400, hop_ns = 1000;
    std::uint32_t y_link_gbps = 0, y_hop_ns = 0;
    std::string algorithm = "auto";
};

tpurt::DType dtype_named(const std::string &name) {
    return name == "bf16"    ? tpurt::DType::Bf16
           : name == "int32" ? tpurt::DType::Int32
                             : tpurt::DType::Fp32;
}

double gb_per_s(std::uint64_t bytes, double us) {
    return us > 0 ? static_cast<double>(bytes) / us / 1000 : 0;
}

// The ops' rows; returns the wrong elements of all of them.
std::uint64_t run_op(CollectiveBench &bench, CollectiveOp op, const Options &o,
                     const tpurt::Communicator &comm, const LinkModel &link, double memcpy_bps) {
    const std::uint32_t nranks = comm.nranks();
    const double factor = bus_factor(op, nranks);
    const bool lanes = op == CollectiveOp::AllReduce || op == CollectiveOp::ReduceScatter ||
                       op == CollectiveOp::AllGather;
    const bool reduces = op == CollectiveOp::AllReduce || op == CollectiveOp::ReduceScatter;
    std::printf("\n# %s%s, %s, %u ranks, busbw = algbw x %.3f\n", op_name(op),
                reduces ? " (sum)" : "", o.dtype.c_str(), nranks, factor);
    std::printf("# %10s %10s %5s %10s | %10s %7s %7s | %10s %6s | %10s %7s %7s | %6s\n", "size",
                "count", "type", "algorithm", "model(us)", "algbw", "busbw", "pred(us)", "ratio",
                "wall(us)", "algbw", "busbw", "#wrong");
    std::uint64_t wrong = 0;
    Measurement last;
    for (std::uint64_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= o.factor) {
        const Measurement m = bench.run(op, bytes, o.iters);
        if (m.size.count == 0)
            continue;
        const tpurt::CollectiveAlgorithm algorithm =
            lanes ? comm.algorithm(m.size.bytes) : tpurt::CollectiveAlgorithm::Ring;
        const double pred = alpha_beta_us(op, m.size.bytes, nranks, link,
                                          lane_model(algorithm, comm.shape(algorithm)));
        const double model_bw = gb_per_s(m.size.bytes, m.modelled_us);
        const double wall_bw = gb_per_s(m.size.bytes, m.wall_us);
        std::printf("  %10llu %10llu %5s %10s | %10.2f %7.2f %7.2f | %10.2f %6.3f | %10.1f %7.3f "
                    "%7.3f | %6llu\n",
                    static_cast<unsigned long long>(m.size.bytes),
                    static_cast<unsigned long long>(m.size.count), o.dtype.c_str(),
                    tpurt::algorithm_name(algorithm), m.modelled_us, model_bw, model_bw * factor,
                    pred, m.modelled_us / pred, m.wall_us, wall_bw, wall_bw * factor,
                    static_cast<unsigned long long>(m.wrong));
        std::fflush(stdout);
        wrong += m.wrong;
        last = m;
    }
    if (last.size.count != 0)
        std::printf("# %s at %llu bytes: wall-time busbw %.3f GB/s = %.3f x memcpy\n", op_name(op),
                    static_cast<unsigned long long>(last.size.bytes),
                    gb_per_s(last.size.bytes, last.wall_us) * factor,
                    gb_per_s(last.size.bytes, last.wall_us) * factor * 1e9 / memcpy_bps);
    return wrong;
}

int run(const Options &o) {
    std::vector<CollectiveOp> ops;
    if (o.op == "all")
        ops = {CollectiveOp::AllReduce, CollectiveOp::ReduceScatter, CollectiveOp::AllGather,
               CollectiveOp::Broadcast, CollectiveOp::AllToAll};
    else
        ops = {*op_named(o.op)};
    tpurt::CommRanks ranks(o.in_process ? in_process_cards(o.cards ? o.cards : 4, o.topology,
                                                           {.link_gbps = o.link_gbps,
                                                            .hop_ns = o.hop_ns,
                                                            .y_link_gbps = o.y_link_gbps,
                                                            .y_hop_ns = o.y_hop_ns})
                                        : fabric_cards(o.cards));
    tpurt::Communicator comm = tpurt::Communicator::init_all(
        ranks.devices, {.algorithm = *tpurt::algorithm_named(o.algorithm)});
    const tpurt::DeviceInfo &info = ranks.devices[0].info();
    const LinkModel link = link_model(info.ici);
    const double memcpy_bps = memcpy_bytes_per_second(o.max_bytes, 5);
    std::printf("# tpu-collectives-perf: %u cards (%s) of a %s fabric %ux%u; links %u Gbit/s "
                "each way, hop %u ns (y links %u Gbit/s, %u ns); card clock %u MHz; messages "
                "of up to %llu bytes\n",
                comm.nranks(), o.in_process ? "in process" : "tpu.ko",
                info.ici.topology == TPU_ICI_TOPO_TORUS2D ? "torus2d" : "ring", info.ici.dim_x,
                info.ici.dim_y, link.link_gbps, link.hop_ns, info.ici.y_link_gbps,
                info.ici.y_hop_ns, info.clock_mhz,
                static_cast<unsigned long long>(link.piece_bytes));
    std::printf("# alpha = %u ns (a hop), beta = %.5f ns/byte (1 / link bandwidth); model = the "
                "slowest rank's card cycles at the clock; GB/s = 1e9 bytes/s\n",
                link.hop_ns, link.ns_per_byte());
    std::printf("# CPU: %s; memcpy %.2f GB/s (%llu bytes, best of 5)\n", cpu_name().c_str(),
                memcpy_bps / 1e9, static_cast<unsigned long long>(o.max_bytes));
    std::fflush(stdout);
    CollectiveBench bench(ranks, comm, dtype_named(o.dtype), o.max_bytes);
    std::uint64_t wrong = 0;
    for (const CollectiveOp op : ops)
        wrong += run_op(bench, op, o, comm, link, memcpy_bps);
    std::printf("\n# wrong elements: %llu\n", static_cast<unsigned long long>(wrong));
    return wrong == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
    Options o;
    CLI::App app{"tpu-collectives-perf: the Communicator's collectives timed like nccl-tests"};
    app.add_option("--op", o.op,
                   "all_reduce, reduce_scatter, all_gather, broadcast, all_to_all or all")
        ->check(CLI::IsMember(
            {"all_reduce", "reduce_scatter", "all_gather", "broadcast", "all_to_all", "all"}))
        ->capture_default_str();
    app.add_option("-b,--min-bytes", o.min_bytes, "smallest size (K, M suffixes: 2^10, 2^20)")
        ->transform(CLI::AsSizeValue(false))
        ->capture_default_str();
    app.add_option("-e,--max-bytes", o.max_bytes, "largest size")
        ->transform(CLI::AsSizeValue(false))
        ->capture_default_str();
    app.add_option("-f,--factor", o.factor, "size step")
        ->check(CLI::Range(2, 1024))
        ->capture_default_str();
    app.add_option("--dtype", o.dtype, "fp32, bf16 or int32")
        ->check(CLI::IsMember({"fp32", "bf16", "int32"}))
        ->capture_default_str();
    app.add_option("-n,--iters", o.iters, "timed runs a size")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str();
    app.add_option("--cards", o.cards, "cards (default: every card of the fabric; in process 4)")
        ->check(CLI::Range(2, 64));
    app.add_option("--algorithm", o.algorithm,
                   "all-reduce, reduce-scatter and all-gather: auto (by size and topology, or "
                   "TPURT_COLLECTIVE_ALGORITHM), ring, bidir_ring, torus2d or hierarchical")
        ->check(CLI::IsMember({"auto", "ring", "bidir_ring", "torus2d", "hierarchical"}))
        ->capture_default_str();
    app.add_flag("--in-process", o.in_process, "in-process cards instead of tpu.ko's");
    app.add_option("--topology", o.topology, "in process: ring or torus2d (2 x cards/2)")
        ->check(CLI::IsMember({"ring", "torus2d"}))
        ->capture_default_str();
    app.add_option("--link-gbps", o.link_gbps, "in process: each link direction's Gbit/s")
        ->check(CLI::Range(1, 1000000))
        ->capture_default_str();
    app.add_option("--hop-ns", o.hop_ns, "in process: a hop's latency, ns")
        ->check(CLI::Range(0, 1000000000))
        ->capture_default_str();
    app.add_option("--y-link-gbps", o.y_link_gbps,
                   "in process, a torus: the y links' Gbit/s (0: --link-gbps)")
        ->check(CLI::Range(0, 1000000))
        ->capture_default_str();
    app.add_option("--y-hop-ns", o.y_hop_ns,
                   "in process, a torus: the y links' hop ns (0: --hop-ns)")
        ->check(CLI::Range(0, 1000000000))
        ->capture_default_str();
    CLI11_PARSE(app, argc, argv);
    if (o.min_bytes == 0 || o.min_bytes > o.max_bytes) {
        std::fprintf(stderr, "tpu-collectives-perf: --min-bytes must be 1 .. --max-bytes\n");
        return 2;
    }
    try {
        return run(o);
    } catch (const tpurt::Error &e) {
        std::fprintf(stderr, "tpu-collectives-perf: %s\n", e.what());
        return 2;
    }
}
