// SPDX-License-Identifier: MIT
// perf_model.hpp - what tpu-collectives-perf computes besides its measurements: the sizes of a
// row (nccl-tests' convention), the bus bandwidth factors of nccl-tests (doc/PERFORMANCE.md)
// and the alpha-beta time (Thakur, Rabenseifner, Gropp 2005) of the algorithm the
// Communicator runs (ring, bidirectional ring, 2-D torus), with alpha and beta the fabric's link
// figures as the card models them (docs/hardware.md section 10, "Modelled time"). Pure functions.
#pragma once

#include <tpurt/collectives.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace tpu::bench {

enum class CollectiveOp : std::uint8_t { AllReduce, ReduceScatter, AllGather, Broadcast, AllToAll };

const char *op_name(CollectiveOp op);
// The op named `name` (op_name()'s), if any.
std::optional<CollectiveOp> op_named(const std::string &name);

// One row's buffers. `bytes` is nccl-tests' size: the larger buffer of a rank (all-reduce and
// broadcast: the one buffer; all-gather: the gathered output; reduce-scatter and all-to-all: the
// input), so
// that algbw = bytes / time.
struct RowSize {
    std::uint64_t bytes = 0; // the size asked for, rounded down to whole elements (per rank)
    std::uint64_t count = 0; // elements of that buffer
    // Elements each rank sends (all-gather), keeps (reduce-scatter), sends to each rank
    // (all-to-all).
    std::uint64_t rank_count = 0;
};

// The row for `bytes` asked of `op` on `nranks` ranks with elements of `element` bytes; a count
// of 0 if the size holds less than an element per rank.
RowSize row_size(CollectiveOp op, std::uint64_t bytes, std::uint32_t nranks, std::uint32_t element);

// busbw / algbw: 2 (n - 1) / n for all-reduce, (n - 1) / n for all-gather, reduce-scatter and
// all-to-all, 1 for broadcast.
double bus_factor(CollectiveOp op, std::uint32_t nranks);

// A fabric's links as the card models them.
struct LinkModel {
    std::uint32_t link_gbps = 0;   // each direction of a link
    std::uint32_t hop_ns = 0;      // alpha: a message's latency over one hop
    std::uint64_t piece_bytes = 0; // the Communicator's largest message (credits x 4 KiB)
    // A torus's y links (spec 2.4: a pod's links between servers); 0: as the x links.
    std::uint32_t y_link_gbps = 0;
    std::uint32_t y_hop_ns = 0;

    // beta, nanoseconds a byte: 8 / link_gbps.
    double ns_per_byte() const { return 8.0 / link_gbps; }
    double y_ns_per_byte() const { return 8.0 / (y_link_gbps ? y_link_gbps : link_gbps); }
    double y_alpha() const { return y_hop_ns ? y_hop_ns : hop_ns; }
};

// The links of the fabric a card of `ici` is on.
LinkModel link_model(const tpurt::IciPlace &ici);

// An all-reduce, reduce-scatter or all-gather algorithm's lanes (collectives.hpp,
// "Algorithms"): `lanes` shares of the data, each along rings of `first` cards (x) then of
// `second` (y) (first 0: the ring of every rank); `both_orders`: half the lanes go along y first.
struct LaneModel {
    std::uint32_t lanes = 1, first = 0, second = 1;
    bool both_orders = false;
};
// Ring: one lane along the ring; BidirectionalRing: two; Torus2d: four along dim_x then dim_y
// and along dim_y then dim_x (two, x first, if not square); Hierarchical: two, x first (shape:
// Communicator::shape()).
LaneModel lane_model(tpurt::CollectiveAlgorithm algorithm, const tpurt::CommShape &shape);

// The alpha-beta time in microseconds of the Communicator's algorithm for a row of `bytes`
// (RowSize::bytes) on `nranks` ranks, p = nranks, by `lanes` for all-reduce, reduce-scatter
// and all-gather (L lanes, each along rings of P then Q cards: L = 1, P = p, Q = 1 the ring):
//   reduce-scatter  (P - 1) (ax + bytes / (L P) bx) + (Q - 1) (ay + bytes / (L P Q) by):
//                   the lanes side by side on their own links, each step one alpha and one
//                   chunk; the second axis's chunks are the first's cut in Q; alpha and beta
//                   those of the x links (ax, bx), then the y links' (ay, by); with lanes in
//                   both orders the slower order's time (the lanes run side by side)
// The ring algorithms, broadcast and all-to-all step every rank at once along the ring, which
// on a torus crosses x and y links: their alpha and beta are the slower links'. For the ring
// algorithms that is the time (every step waits for its slowest link); broadcast's pipeline and
// all-to-all's relay cross the slower links only on some of their hops, so with y links slower
// than x links their formula is an upper bound.
//   all-gather      the same
//   all-reduce      twice that (ring: 2 (p - 1) (alpha + (bytes / p) beta));
// broadcast and all-to-all on the ring:
//   all-reduce      ring reduce-scatter then ring all-gather: 2 (p - 1) (alpha + (bytes / p) beta)
//   reduce-scatter  ring: (p - 1) (alpha + (bytes / p) beta)
//   all-gather      ring: (p - 1) (alpha + (bytes / p) beta)
//   broadcast       a pipeline along the ring from the root in pieces of m = min(piece, bytes):
//                   (p - 1) (alpha + m beta) + (bytes - m) beta: the first piece through p - 1
//                   hops, the rest behind it at line rate
//   all-to-all      a relay along the ring: step s = 1 .. p - 1 passes p - s blocks of
//                   bytes / p: (p - 1) alpha + ((p - 1) / 2) bytes beta
// Each step's chunk goes in pieces that follow each other on the link, so a step costs one
// alpha. The receive-reduce costs nothing beyond the link time on the card (gamma = 0).
double alpha_beta_us(CollectiveOp op, std::uint64_t bytes, std::uint32_t nranks,
                     const LinkModel &link, LaneModel lanes = {});

} // namespace tpu::bench
