// SPDX-License-Identifier: MIT
// perf_model.cpp - row sizes, bus bandwidth factors and alpha-beta times (perf_model.hpp).
#include "perf_model.hpp"

#include <algorithm>
#include <array>

namespace tpu::bench {

namespace {

constexpr std::array<CollectiveOp, 5> all_ops = {
    CollectiveOp::AllReduce, CollectiveOp::ReduceScatter, CollectiveOp::AllGather,
    CollectiveOp::Broadcast, CollectiveOp::AllToAll};

// Whether a rank holds 1 / nranks of the row's buffer.
bool split(CollectiveOp op) {
    return op == CollectiveOp::ReduceScatter || op == CollectiveOp::AllGather ||
           op == CollectiveOp::AllToAll;
}

} // namespace

const char *op_name(CollectiveOp op) {
    switch (op) {
    case CollectiveOp::AllReduce:
        return "all_reduce";
    case CollectiveOp::ReduceScatter:
        return "reduce_scatter";
    case CollectiveOp::AllGather:
        return "all_gather";
    case CollectiveOp::Broadcast:
        return "broadcast";
    case CollectiveOp::AllToAll:
        return "all_to_all";
    }
    return "?";
}

std::optional<CollectiveOp> op_named(const std::string &name) {
    for (const CollectiveOp op : all_ops)
        if (name == op_name(op))
            return op;
    return std::nullopt;
}

RowSize row_size(CollectiveOp op, std::uint64_t bytes, std::uint32_t nranks,
                 std::uint32_t element) {
    RowSize row;
    const std::uint64_t parts = split(op) ? nranks : 1;
    row.rank_count = bytes / element / parts;
    row.count = row.rank_count * parts;
    row.bytes = row.count * element;
    return row;
}

double bus_factor(CollectiveOp op, std::uint32_t nranks) {
    const double n = nranks;
    switch (op) {
    case CollectiveOp::AllReduce:
        return 2 * (n - 1) / n;
    case CollectiveOp::ReduceScatter:
    case CollectiveOp::AllGather:
    case CollectiveOp::AllToAll:
        return (n - 1) / n;
    case CollectiveOp::Broadcast:
        break;
    }
    return 1;
}

LinkModel link_model(const tpurt::IciPlace &ici) {
    return {.link_gbps = ici.link_gbps,
            .hop_ns = ici.hop_ns,
            .piece_bytes = std::uint64_t{ici.credits} * TPU_ICI_PACKET_BYTES,
            .y_link_gbps = ici.y_link_gbps,
            .y_hop_ns = ici.y_hop_ns};
}

LaneModel lane_model(tpurt::CollectiveAlgorithm algorithm, const tpurt::CommShape &shape) {
    switch (algorithm) {
    case tpurt::CollectiveAlgorithm::BidirectionalRing:
        return {2, 0, 1};
    case tpurt::CollectiveAlgorithm::Torus2d:
        if (shape.size[0] == shape.size[1])
            return {4, shape.size[0], shape.size[1], true};
        return {2, shape.size[0], shape.size[1]};
    case tpurt::CollectiveAlgorithm::Hierarchical:
        return {2, shape.size[0], shape.size[1]};
    case tpurt::CollectiveAlgorithm::Auto:
    case tpurt::CollectiveAlgorithm::Ring:
        break;
    }
    return {};
}

double alpha_beta_us(CollectiveOp op, std::uint64_t bytes, std::uint32_t nranks,
                     const LinkModel &link, LaneModel lanes) {
    if (nranks < 2 || bytes == 0)
        return 0;
    const double ax = link.hop_ns, bx = link.ns_per_byte();
    const double ay = link.y_alpha(), by = link.y_ns_per_byte();
    const double alpha = std::max(ax, ay), beta = std::max(bx, by), steps = nranks - 1;
    const double l = lanes.lanes, b = static_cast<double>(bytes);
    // A reduce-scatter's (or all-gather's) lanes: along an axis of p cards, then one of q.
    const auto axes = [&](double p, double a1, double b1, double q, double a2, double b2) {
        return (p - 1) * (a1 + b / (l * p) * b1) + (q - 1) * (a2 + b / (l * p * q) * b2);
    };
    double scatter = axes(nranks, alpha, beta, 1, 0, 0);
    if (lanes.first) {
        scatter = axes(lanes.first, ax, bx, lanes.second, ay, by);
        if (lanes.both_orders)
            scatter = std::max(scatter, axes(lanes.second, ay, by, lanes.first, ax, bx));
    }
    double ns = 0;
    switch (op) {
    case CollectiveOp::AllReduce:
        ns = 2 * scatter;
        break;
    case CollectiveOp::ReduceScatter:
    case CollectiveOp::AllGather:
        ns = scatter;
        break;
    case CollectiveOp::Broadcast: {
        const std::uint64_t piece = std::min(link.piece_bytes, bytes);
        ns = steps * (alpha + piece * beta) + static_cast<double>(bytes - piece) * beta;
        break;
    }
    case CollectiveOp::AllToAll:
        ns = steps * alpha + steps / 2 * static_cast<double>(bytes) * beta;
        break;
    }
    return ns / 1000;
}

} // namespace tpu::bench
