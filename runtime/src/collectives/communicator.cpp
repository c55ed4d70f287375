// SPDX-License-Identifier: MIT
// communicator.cpp - making a tpurt::Communicator (init_all, init_rank: the ring from the cards'
// coordinates, the ranks' ports, the tags from the id), its failure and abort
// (collectives.hpp). The collectives themselves are in collective_ops.cpp.
#include "collectives/comm_state.hpp"
#include "tpurt/error.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>

namespace tpurt {

namespace detail {

void CommState::fail(std::exception_ptr why) {
    {
        std::lock_guard lock(mutex);
        if (!error)
            error = std::move(why);
    }
    for (const auto &local : locals)
        local->device.abort_running_job();
}

void CommState::check() const {
    std::lock_guard lock(mutex);
    if (error)
        std::rethrow_exception(error);
}

CollectiveAlgorithm CommState::algorithm(std::uint64_t bytes) const {
    if (nranks < 2)
        return CollectiveAlgorithm::Ring;
    if (options.algorithm != CollectiveAlgorithm::Auto)
        return options.algorithm;
    if (bytes < kMultiLaneBytes)
        return CollectiveAlgorithm::Ring;
    if (torus_shape.torus)
        return slow_y ? CollectiveAlgorithm::Hierarchical : CollectiveAlgorithm::Torus2d;
    return bidirectional ? CollectiveAlgorithm::BidirectionalRing : CollectiveAlgorithm::Ring;
}

} // namespace detail

namespace {

std::uint32_t tag_base_of(const CommId &id) {
    std::uint32_t h = 2166136261u; // FNV-1a
    for (const std::uint8_t byte : id.bytes)
        h = (h ^ byte) * 16777619u;
    return (h ^ (h >> 16)) & 0xffff;
}

// The ranks' places: on the ring, and on the torus if they are all of a torus's cards.
void set_shapes(detail::CommState &state, std::span<const IciPlace> places) {
    const std::uint32_t n = state.nranks;
    CommShape &ring = state.ring_shape;
    ring.size[0] = n;
    for (std::uint32_t r = 0; r < n; ++r) {
        ring.index[0].push_back(r);
        ring.position[0].push_back(state.positions[r]);
        ring.index[1].push_back(0);
        ring.position[1].push_back(0);
    }
    const IciPlace &first = places[0];
    if (n < 2 || first.topology != TPU_ICI_TOPO_TORUS2D || n != first.dim_x * first.dim_y)
        return;
    CommShape &torus = state.torus_shape;
    torus.torus = ring.torus = true;
    state.slow_y = first.y_link_gbps != 0 &&
                   (first.y_link_gbps < first.link_gbps || first.y_hop_ns > first.hop_ns);
    torus.size[0] = first.dim_x;
    torus.size[1] = first.dim_y;
    for (const IciPlace &p : places) {
        torus.index[0].push_back(p.x);
        torus.position[0].push_back(p.x);
        torus.index[1].push_back(p.y);
        torus.position[1].push_back(p.y);
    }
}

// The algorithm the options or TPURT_COLLECTIVE_ALGORITHM force, checked against the cards.
void set_algorithm(detail::CommState &state, std::span<const IciPlace> places) {
    CollectiveAlgorithm &a = state.options.algorithm;
    const char *env = std::getenv("TPURT_COLLECTIVE_ALGORITHM");
    if (a == CollectiveAlgorithm::Auto && env && *env) {
        const std::optional<CollectiveAlgorithm> named = algorithm_named(env);
        if (!named)
            throw Error(ErrorCode::InvalidArgument,
                        std::string("TPURT_COLLECTIVE_ALGORITHM=") + env +
                            ": not an algorithm (auto, ring, bidir_ring, torus2d or hierarchical)");
        a = *named;
    }
    const std::vector<detail::RingPorts> ports = detail::ring_ports(places, state.rank_at);
    state.bidirectional = state.nranks > 1;
    for (const detail::RingPorts &p : ports)
        state.bidirectional = state.bidirectional && p.send_port != p.recv_port;
    if (state.nranks < 2)
        return;
    if (detail::on_torus(a) && !state.torus_shape.torus)
        throw Error(ErrorCode::InvalidArgument,
                    std::string("the ") + algorithm_name(a) +
                        " collective algorithm needs a communicator of every card of a 2-D "
                        "torus fabric");
    if (a == CollectiveAlgorithm::BidirectionalRing && !state.bidirectional)
        throw Error(ErrorCode::InvalidArgument,
                    "the bidir_ring collective algorithm needs two link directions between ring "
                    "neighbours; these " +
                        std::to_string(state.nranks) + " cards share one link");
}

std::shared_ptr<detail::CommState> make_state(std::uint32_t nranks, const CommId &id,
                                              const CommOptions &options,
                                              std::span<const IciPlace> places) {
    auto state = std::make_shared<detail::CommState>();
    state->nranks = nranks;
    state->tag_base = tag_base_of(id);
    state->options = options;
    state->rank_at = detail::ring_order(places);
    state->positions.resize(nranks);
    for (std::uint32_t q = 0; q < nranks; ++q)
        state->positions[state->rank_at[q]] = q;
    set_shapes(*state, places);
    set_algorithm(*state, places);
    return state;
}

void add_local(detail::CommState &state, Device device, std::uint32_t rank,
               std::span<const IciPlace> places) {
    const std::vector<detail::RingPorts> ports = detail::ring_ports(places, state.rank_at);
    auto local = std::make_unique<detail::LocalRank>(std::move(device));
    local->rank = rank;
    local->position = state.positions[rank];
    local->ports = ports[local->position];
    state.local_ranks.push_back(rank);
    state.locals.push_back(std::move(local));
}

} // namespace

Communicator Communicator::init_all(std::vector<Device> devices, const CommOptions &options) {
    if (devices.empty())
        throw Error(ErrorCode::InvalidArgument, "a communicator needs at least one card");
    std::vector<IciPlace> places;
    for (const Device &d : devices)
        places.push_back(d.info().ici);
    const auto n = static_cast<std::uint32_t>(devices.size());
    auto state = make_state(n, CommId::make(), options, places);
    for (std::uint32_t r = 0; r < n; ++r)
        add_local(*state, std::move(devices[r]), r, places);
    return Communicator(std::move(state));
}

std::uint32_t Communicator::fabric_rank(const DeviceInfo &info) {
    if (!info.ici.on_fabric())
        throw Error(ErrorCode::InvalidArgument,
                    info.path + " is on no inter-chip fabric: it has no rank on one");
    const std::vector<IciPlace> places = detail::fabric_places(info.ici);
    const std::vector<std::uint32_t> ring = detail::ring_order(places);
    const std::uint32_t index = info.ici.y * info.ici.dim_x + info.ici.x;
    return static_cast<std::uint32_t>(std::find(ring.begin(), ring.end(), index) - ring.begin());
}

Communicator Communicator::init_rank(Device device, std::uint32_t nranks, const CommId &id,
                                     std::uint32_t rank, const CommOptions &options) {
    const IciPlace &ici = device.info().ici;
    const std::uint32_t cards = ici.dim_x * ici.dim_y;
    if (!ici.on_fabric() || nranks != cards)
        throw Error(ErrorCode::InvalidArgument,
                    "init_rank takes every card of the fabric, one rank each: " +
                        std::to_string(nranks) + " ranks asked, the fabric of " +
                        device.info().path + " has " + std::to_string(cards) + " cards");
    const std::uint32_t place = fabric_rank(device.info());
    if (rank != place)
        throw Error(ErrorCode::InvalidArgument,
                    "rank " + std::to_string(rank) + " asked of " + device.info().path +
                        ", whose place on the fabric's ring makes it rank " +
                        std::to_string(place) + " (Communicator::fabric_rank())");
    // Ranks in ring order: rank r is the r-th card of the ring.
    const std::vector<IciPlace> all = detail::fabric_places(ici);
    const std::vector<std::uint32_t> ring = detail::ring_order(all);
    std::vector<IciPlace> places(nranks);
    for (std::uint32_t q = 0; q < nranks; ++q)
        places[q] = all[ring[q]];
    auto state = make_state(nranks, id, options, places);
    add_local(*state, std::move(device), rank, places);
    return Communicator(std::move(state));
}

std::uint32_t Communicator::nranks() const {
    return state_->nranks;
}

const std::vector<std::uint32_t> &Communicator::local_ranks() const {
    return state_->local_ranks;
}

const std::vector<std::uint32_t> &Communicator::ring_positions() const {
    return state_->positions;
}

CommShape Communicator::shape(CollectiveAlgorithm algorithm) const {
    return state_->shape(algorithm);
}

CollectiveAlgorithm Communicator::algorithm(std::uint64_t bytes) const {
    return state_->algorithm(bytes);
}

const char *algorithm_name(CollectiveAlgorithm algorithm) {
    switch (algorithm) {
    case CollectiveAlgorithm::Auto:
        return "auto";
    case CollectiveAlgorithm::Ring:
        return "ring";
    case CollectiveAlgorithm::BidirectionalRing:
        return "bidir_ring";
    case CollectiveAlgorithm::Torus2d:
        return "torus2d";
    case CollectiveAlgorithm::Hierarchical:
        return "hierarchical";
    }
    return "?";
}

std::optional<CollectiveAlgorithm> algorithm_named(const std::string &name) {
    for (const CollectiveAlgorithm a :
         {CollectiveAlgorithm::Auto, CollectiveAlgorithm::Ring,
          CollectiveAlgorithm::BidirectionalRing, CollectiveAlgorithm::Torus2d,
          CollectiveAlgorithm::Hierarchical})
        if (name == algorithm_name(a))
            return a;
    return std::nullopt;
}

std::exception_ptr Communicator::async_error() const {
    std::lock_guard lock(state_->mutex);
    return state_->error;
}

void Communicator::abort() {
    state_->fail(std::make_exception_ptr(
        Error(ErrorCode::JobFailed, "the communicator was aborted (Communicator::abort())")));
}

} // namespace tpurt
