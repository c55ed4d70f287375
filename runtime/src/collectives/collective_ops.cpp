// SPDX-License-Identifier: MIT
// collective_ops.cpp - the collectives of tpurt::Communicator (collectives.hpp): the operands
// checked, each local rank's part queued on its stream as host work that copies what the
// ring works on, launches the rank's cached ring program over it and waits for it with the
// communicator's timeout. Parts of several local ranks are queued from a thread each: a part
// whose stream is idle runs at once, and its program waits on the other ranks' links.
#include "collectives/comm_state.hpp"
#include "collectives/lanes.hpp"
#include "profile/profiler_record.hpp"
#include "tpurt/error.hpp"
#include "tpurt/profile.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <functional>
#include <thread>

namespace tpurt {

namespace {

using detail::CollectiveKind;
using detail::CommState;
using detail::LocalRank;

// The first spec whose RECV can drop the messages a failed collective left
// (TPU_F_LINK_SKIP_STALE); older cards refuse the flag.
constexpr std::uint32_t kSkipStaleSpec = 0x00020002;

const char *kind_name(CollectiveKind kind) {
    switch (kind) {
    case CollectiveKind::AllReduce:
        return "all_reduce";
    case CollectiveKind::ReduceScatter:
        return "reduce_scatter";
    case CollectiveKind::AllGather:
        return "all_gather";
    case CollectiveKind::Broadcast:
        return "broadcast";
    case CollectiveKind::AllToAll:
        return "all_to_all";
    case CollectiveKind::SendRecv:
        return "send_recv";
    }
    return "?";
}

const char *reduce_name(LinkReduce reduce) {
    switch (reduce) {
    case LinkReduce::Sum:
        return "sum";
    case LinkReduce::Max:
        return "max";
    case LinkReduce::Min:
        return "min";
    case LinkReduce::Copy:
        break;
    }
    return "copy";
}

LinkReduce link_reduce(ReduceKind op) {
    switch (op) {
    case ReduceKind::Sum:
        return LinkReduce::Sum;
    case ReduceKind::Max:
        return LinkReduce::Max;
    case ReduceKind::Min:
        return LinkReduce::Min;
    }
    throw Error(ErrorCode::InvalidArgument, "unknown reduction");
}

std::uint8_t *host_of(const Tensor &t) {
    return static_cast<std::uint8_t *>(t.storage()->data()) + t.layout().offset_bytes();
}

// One collective call: what every rank's part shares.
struct Call {
    CollectiveKind kind;
    LinkReduce reduce = LinkReduce::Copy;
    DType type = DType::Fp32;
    // The elements of send (broadcast, all-reduce, all-gather), of recv (reduce-scatter), of a
    // block (all-to-all); send-recv: none (each part's tensors say).
    std::uint64_t count = 0;
    std::uint32_t root = 0;
};

// A send-recv part's neighbours (Communicator::none: none).
struct Peers {
    std::uint32_t to = Communicator::none, from = Communicator::none;
};

class Collective {
  public:
    Collective(CommState &state, Call call) : s_(state), call_(call) {}

    void check(std::span<Stream *const> streams, std::span<const Tensor> send,
               std::span<const Tensor> recv) const {
        const std::string name = kind_name(call_.kind);
        const std::size_t n = s_.locals.size();
        if (streams.size() != n || send.size() != n || recv.size() != n)
            throw Error(ErrorCode::InvalidArgument,
                        name + ": the communicator drives " + std::to_string(n) +
                            " rank(s) here; give a stream, a send and a recv tensor for each");
        for (std::size_t i = 0; i < n; ++i) {
            if (!streams[i])
                throw Error(ErrorCode::InvalidArgument, name + ": rank's stream is null");
            if (call_.kind == CollectiveKind::SendRecv)
                continue; // check_peers()
            for (const Tensor *t : {&send[i], &recv[i]})
                if (!t->storage() || !t->is_contiguous() || t->dtype() != call_.type)
                    throw Error(ErrorCode::InvalidArgument,
                                name + ": every tensor must be densely packed " +
                                    dtype_name(call_.type));
            if (send[i].element_count() != send_count() || recv[i].element_count() != recv_count())
                throw Error(ErrorCode::InvalidArgument,
                            name + " of " + std::to_string(s_.nranks) + " ranks takes " +
                                std::to_string(send_count()) + " elements in and " +
                                std::to_string(recv_count()) + " out, not " +
                                std::to_string(send[i].element_count()) + " and " +
                                std::to_string(recv[i].element_count()));
        }
    }

    // Send-recv's neighbours of local rank i, and its tensors where it has one.
    void check_peers(std::size_t i, const Tensor &send, const Tensor &recv, Peers peers) const {
        const LocalRank &local = *s_.locals[i];
        const std::string name = "send_recv of rank " + std::to_string(local.rank);
        for (const auto &[peer, t, what] :
             {std::tuple{peers.to, &send, "to"}, std::tuple{peers.from, &recv, "from"}}) {
            if (peer == Communicator::none)
                continue;
            if (peer >= s_.nranks || peer == local.rank || !neighbour(local, peer))
                throw Error(ErrorCode::InvalidArgument,
                            name + " " + what + " rank " + std::to_string(peer) +
                                ": only the ranks next to it on the ring (the one before and "
                                "the one after) are reached, over one link");
            if (!t->storage() || !t->is_contiguous())
                throw Error(ErrorCode::InvalidArgument,
                            name + ": its tensors must be densely packed");
        }
    }

    // Rank `local`'s part: runs on its stream.
    void run(LocalRank &local, const Tensor &send, const Tensor &recv, Peers peers = {}) {
        s_.check();
        std::lock_guard lock(local.mutex);
        if (call_.kind == CollectiveKind::SendRecv)
            return exchange(local, send, recv, peers);
        const Tensor work = prepare(local, send, recv);
        const std::shared_ptr<const Executable> exe =
            executable(local, work, chunks(), local.ports, "");
        launch(local, *exe, work);
        if (call_.kind == CollectiveKind::ReduceScatter && laid_out())
            move_blocks(local.rank, host_of(recv), host_of(work), false);
        else if (call_.kind == CollectiveKind::ReduceScatter)
            std::memcpy(host_of(recv), host_of(work) + chunk_bytes() * local.rank, chunk_bytes());
        if (call_.kind == CollectiveKind::AllGather && laid_out())
            for (std::uint32_t k = 0; k < s_.nranks; ++k)
                move_blocks(k, host_of(recv) + k * chunk_bytes(), host_of(work), false);
        if (call_.kind == CollectiveKind::AllToAll)
            for (std::uint32_t k = 0; k < s_.nranks; ++k)
                std::memcpy(host_of(recv) + k * chunk_bytes(),
                            host_of(work) +
                                (k == local.rank ? k : s_.nranks + s_.positions[k]) * chunk_bytes(),
                            chunk_bytes());
    }

  private:
    bool neighbour(const LocalRank &local, std::uint32_t peer) const {
        const std::uint32_t p = s_.nranks, q = s_.positions[peer];
        return q == (local.position + 1) % p || q == (local.position + p - 1) % p;
    }

    // Send-recv: what goes out and what comes in, through a scratch buffer, in one program.
    void exchange(LocalRank &local, const Tensor &send, const Tensor &recv, Peers peers) {
        const std::uint64_t out = peers.to == Communicator::none ? 0 : send.layout().data_bytes();
        const std::uint64_t in = peers.from == Communicator::none ? 0 : recv.layout().data_bytes();
        if (out + in == 0)
            return;
        const Tensor work = scratch(local, (out + in + 3) / 4, DType::Int32);
        if (out)
            std::memcpy(host_of(work), host_of(send), out);
        // The next position is reached on send_port, the previous on recv_port (the same link,
        // the other way); on a ring of two, a send goes to the next and a receive comes from the
        // previous, so that both ends pick the same link.
        const std::uint32_t p = s_.nranks;
        const auto next = [&](std::uint32_t peer) {
            return s_.positions[peer] == (local.position + 1) % p;
        };
        const auto previous = [&](std::uint32_t peer) {
            return s_.positions[peer] == (local.position + p - 1) % p;
        };
        detail::RingPorts ports = local.ports;
        if (out && !next(peers.to))
            ports.send_port = local.ports.recv_port;
        if (in && !previous(peers.from))
            ports.recv_port = local.ports.send_port;
        const std::string key = " to " + std::to_string(peers.to) + " " + std::to_string(out) +
                                " from " + std::to_string(peers.from) + " " + std::to_string(in);
        const auto exe = executable(local, work, {{0, out}, {out, in}}, ports, key);
        launch(local, *exe, work);
        if (in)
            std::memcpy(host_of(recv), host_of(work) + out, in);
    }

    // A working tensor of `count` elements in the rank's scratch buffer.
    Tensor scratch(LocalRank &local, std::uint64_t count, DType type) {
        const std::uint64_t bytes = count * element_size(type);
        if (!local.scratch || local.scratch->size() < bytes)
            local.scratch = std::make_shared<Buffer>(local.device.allocate(bytes));
        return Tensor(local.scratch, TensorLayout::contiguous(type, {count}));
    }

    void launch(LocalRank &local, const Executable &exe, const Tensor &work) {
        const std::uint64_t base = work.device_addr();
        const Buffer *buffers[] = {work.storage().get()};
        const auto start = std::chrono::steady_clock::now();
        JobStats stats;
        try {
            for (std::size_t j = 0; j < exe.program_count(); ++j)
                stats += local.device.launch(exe, j, {&base, 1}, buffers).wait(s_.options.timeout);
        } catch (...) {
            s_.fail(std::current_exception());
            throw;
        }
        if (profiler::active())
            record(local, exe, start, stats);
    }

    // The part's jobs as one op of the profile: the modelled cycles of its programs (the link
    // transfers' cost, docs/hardware.md section 10) and the wall time of the launches.
    static void record(const LocalRank &local, const Executable &exe,
                       std::chrono::steady_clock::time_point start, JobStats stats) {
        const DeviceInfo &info = local.device.info();
        stats.wall = std::chrono::steady_clock::now() - start;
        using Micro = std::chrono::duration<double, std::micro>;
        detail::record_op({.name = exe.name(),
                           .device = info.minor,
                           .start_us = detail::profile_us(start),
                           .wall_us = Micro(stats.wall).count(),
                           .card_us = Micro(stats.modelled_time(info)).count(),
                           .cycles = stats.cycles,
                           .macs = stats.macs,
                           .bytes = exe.bytes_moved(),
                           .jobs = exe.program_count(),
                           .utilisation = 0});
    }

    std::uint64_t element() const { return element_size(call_.type); }
    std::uint64_t send_count() const {
        return call_.kind == CollectiveKind::ReduceScatter || call_.kind == CollectiveKind::AllToAll
                   ? call_.count * s_.nranks
                   : call_.count;
    }
    std::uint64_t recv_count() const {
        return call_.kind == CollectiveKind::AllGather || call_.kind == CollectiveKind::AllToAll
                   ? call_.count * s_.nranks
                   : call_.count;
    }
    std::uint64_t chunk_bytes() const { return call_.count * element(); }

    // The algorithm of an all-reduce, reduce-scatter or all-gather (nccl-tests' size: a rank's
    // larger buffer); the others run on the ring.
    CollectiveAlgorithm algorithm() const {
        switch (call_.kind) {
        case CollectiveKind::AllReduce:
        case CollectiveKind::ReduceScatter:
        case CollectiveKind::AllGather:
            return s_.algorithm(std::max(send_count(), recv_count()) * element());
        case CollectiveKind::Broadcast:
        case CollectiveKind::AllToAll:
        case CollectiveKind::SendRecv:
            break;
        }
        return CollectiveAlgorithm::Ring;
    }
    // Whether a reduce-scatter's or all-gather's blocks sit lane by lane in the working tensor
    // (lanes.hpp) rather than rank by rank (one lane).
    bool laid_out() const { return algorithm() != CollectiveAlgorithm::Ring; }

    // Moves rank k's block (count elements at `block`) to its segments of the lanes in `work` if
    // `in`, from them otherwise.
    void move_blocks(std::uint32_t k, std::uint8_t *block, std::uint8_t *work, bool in) const {
        const CollectiveAlgorithm a = algorithm();
        const CommShape &shape = s_.shape(a);
        const std::vector<detail::LaneAxes> lanes = detail::lanes_of(a, shape);
        const std::uint32_t index[2] = {shape.index[0][k], shape.index[1][k]};
        for (std::size_t l = 0; l < lanes.size(); ++l) {
            const detail::Span part = detail::part({0, call_.count}, lanes.size(), l);
            const detail::Span seg =
                detail::segment(detail::lane_span(true, call_.count, s_.nranks, l, lanes.size()),
                                shape, lanes[l], index);
            std::uint8_t *from = block + part.begin * element(), *to = work + seg.begin * element();
            if (!in)
                std::swap(from, to);
            std::memcpy(to, from, part.size() * element());
        }
    }

    // The tensor the ring works on, holding this rank's input where the ring expects it.
    Tensor prepare(LocalRank &local, const Tensor &send, const Tensor &recv) {
        const std::uint64_t bytes = send_count() * element();
        switch (call_.kind) {
        case CollectiveKind::AllReduce:
        case CollectiveKind::Broadcast:
            if (host_of(send) != host_of(recv) &&
                (call_.kind == CollectiveKind::AllReduce || local.rank == call_.root))
                std::memcpy(host_of(recv), host_of(send), bytes);
            return recv;
        case CollectiveKind::AllGather:
            if (laid_out())
                break;
            std::memmove(host_of(recv) + bytes * local.rank, host_of(send), bytes);
            return recv;
        case CollectiveKind::ReduceScatter:
        case CollectiveKind::AllToAll:
        case CollectiveKind::SendRecv:
            break;
        }
        // All-to-all: the blocks to send, those received, two staging areas (ring_program.hpp).
        const std::uint64_t blocks =
            call_.kind == CollectiveKind::AllToAll ? 4 * s_.nranks - 2 : s_.nranks;
        const Tensor work = scratch(local, blocks * call_.count, call_.type);
        if (call_.kind == CollectiveKind::AllGather) // its block, in its segments
            move_blocks(local.rank, host_of(send), host_of(work), true);
        else if (laid_out())
            for (std::uint32_t k = 0; k < s_.nranks; ++k)
                move_blocks(k, host_of(send) + k * chunk_bytes(), host_of(work), true);
        else
            std::memcpy(host_of(work), host_of(send), bytes);
        return work;
    }

    // The ring's chunks over the working tensor, by ring position: rank k's is the k-th.
    std::vector<detail::RingCollective::Chunk> chunks() const {
        const std::uint64_t n = send_count();
        if (call_.kind == CollectiveKind::Broadcast)
            return {{0, n * element()}};
        std::vector<detail::RingCollective::Chunk> c(s_.nranks);
        for (std::uint32_t q = 0; q < s_.nranks; ++q) {
            const std::uint64_t k = s_.rank_at[q];
            const bool split = call_.kind == CollectiveKind::AllReduce;
            // (All-to-all: chunk q is the block for position q, block k of send.)
            const std::uint64_t first = split ? k * n / s_.nranks : k * call_.count;
            const std::uint64_t last = split ? (k + 1) * n / s_.nranks : (k + 1) * call_.count;
            c[q] = {first * element(), (last - first) * element()};
        }
        return c;
    }

    // The rank's rings of each lane (ring_program.hpp): along the lane's first axis, then its
    // second (reduce-scatter: the reduce-scatters only; all-gather: the all-gathers only, the
    // second axis first); rings of one card left out.
    std::vector<std::vector<detail::RingPhase>> lanes(const LocalRank &local) const {
        const CollectiveAlgorithm a = algorithm();
        const CommShape &shape = s_.shape(a);
        const std::vector<detail::LaneAxes> axes = detail::lanes_of(a, shape);
        const bool blocks = call_.kind != CollectiveKind::AllReduce;
        std::vector<std::vector<detail::RingPhase>> out;
        for (std::size_t l = 0; l < axes.size(); ++l) {
            const detail::Span span = detail::lane_span(blocks, blocks ? call_.count : send_count(),
                                                        s_.nranks, l, axes.size());
            const bool torus = detail::on_torus(a);
            const detail::RingPhase first = ring(local, torus, axes[l], axes[l].first, span);
            const detail::RingPhase second = ring(local, torus, axes[l], axes[l].second(), span);
            std::vector<detail::RingPhase> rings;
            const auto add = [&](detail::RingPhase ring, bool gather) {
                ring.gather = gather;
                if (ring.nranks > 1)
                    rings.push_back(ring);
            };
            if (call_.kind != CollectiveKind::AllGather) {
                add(first, false);
                add(second, false);
            }
            if (call_.kind != CollectiveKind::ReduceScatter) {
                add(second, true);
                add(first, true);
            }
            out.push_back(std::move(rings));
        }
        return out;
    }

    // The ring along `axis` through the rank, in the lane's direction, and its chunks: along
    // the lane's first axis each card's first-axis chunk, along the second its segment. A
    // torus's rings go +x (port 0) and +y (port 2) forward.
    detail::RingPhase ring(const LocalRank &local, bool torus, detail::LaneAxes lane, int axis,
                           detail::Span span) const {
        const CommShape &shape = torus ? s_.torus_shape : s_.ring_shape;
        const std::uint32_t r = local.rank, p = shape.size[axis], other = 1 - axis;
        const std::uint32_t at = shape.position[axis][r];
        detail::RingPhase ring;
        ring.nranks = p;
        ring.position = lane.reverse ? (p - at) % p : at;
        ring.ports = torus ? detail::RingPorts{2u * axis, 2u * axis + 1} : local.ports;
        if (lane.reverse)
            std::swap(ring.ports.send_port, ring.ports.recv_port);
        for (std::uint32_t j = 0; j < p; ++j) {
            const std::uint32_t want = lane.reverse ? (p - j) % p : j;
            std::uint32_t k = 0; // the rank at position `want` along the axis, in r's line
            while (shape.position[axis][k] != want ||
                   shape.position[other][k] != shape.position[other][r])
                ++k;
            const std::uint32_t index[2] = {shape.index[0][k], shape.index[1][k]};
            const detail::Span chunk = axis == lane.first
                                           ? detail::first_chunk(span, shape, lane, index)
                                           : detail::segment(span, shape, lane, index);
            ring.chunks.push_back({chunk.begin * element(), chunk.size() * element()});
        }
        return ring;
    }

    std::shared_ptr<const Executable> executable(LocalRank &local, const Tensor &work,
                                                 std::vector<detail::RingCollective::Chunk> chunks,
                                                 detail::RingPorts ports, const std::string &key) {
        std::string name = std::string(kind_name(call_.kind)) + " " + reduce_name(call_.reduce) +
                           " " + dtype_name(call_.type) + " " + std::to_string(call_.count) + key;
        if (call_.kind == CollectiveKind::Broadcast)
            name += " root " + std::to_string(call_.root);
        if (algorithm() != CollectiveAlgorithm::Ring)
            name += std::string(" ") + algorithm_name(algorithm());
        const auto found = local.executables.find(name);
        if (found != local.executables.end())
            return found->second;
        detail::RingCollective c;
        c.kind = call_.kind;
        c.reduce = call_.reduce;
        c.type = call_.type;
        c.nranks = s_.nranks;
        c.position = local.position;
        c.root_position = s_.positions[call_.root];
        c.ports = ports;
        c.piece_bytes = local.device.info().ici.credits * TPU_ICI_PACKET_BYTES;
        c.tag_base = s_.tag_base;
        c.skip_stale = local.device.info().spec_version >= kSkipStaleSpec;
        c.chunks = std::move(chunks);
        if (c.kind == CollectiveKind::AllReduce || c.kind == CollectiveKind::ReduceScatter ||
            c.kind == CollectiveKind::AllGather)
            c.lanes = lanes(local);
        auto exe = std::make_shared<const Executable>(Executable::link(
            name, {{"data", work.layout().data_bytes()}}, detail::compile_ring_collective(c)));
        local.executables.emplace(name, exe);
        return exe;
    }

    CommState &s_;
    Call call_;
};

// Queues each local rank's part on its stream, from a thread per rank when there are several.
// (send-recv: each local rank's neighbours in send_to and recv_from.)
void queue(CommState &state, Call call, std::span<Stream *const> streams,
           std::span<const Tensor> send, std::span<const Tensor> recv,
           std::span<const std::uint32_t> send_to = {},
           std::span<const std::uint32_t> recv_from = {}) {
    auto collective = std::make_shared<Collective>(state, call);
    collective->check(streams, send, recv);
    std::vector<Peers> peers(state.locals.size());
    if (call.kind == CollectiveKind::SendRecv) {
        if (send_to.size() != peers.size() || recv_from.size() != peers.size())
            throw Error(ErrorCode::InvalidArgument,
                        "send_recv: give send_to and recv_from for each of the communicator's " +
                            std::to_string(peers.size()) + " rank(s) here");
        for (std::size_t i = 0; i < peers.size(); ++i) {
            peers[i] = {send_to[i], recv_from[i]};
            collective->check_peers(i, send[i], recv[i], peers[i]);
        }
    }
    state.check();
    // Refused before any rank's part is queued: a part queued alone would wait for its peers.
    for (Stream *stream : streams)
        if (stream->capturing())
            throw Error(ErrorCode::InvalidArgument,
                        std::string(kind_name(call.kind)) +
                            " cannot be captured: only ops on the card are; queue it before "
                            "begin_capture() or after end_capture()");
    auto part = [&](std::size_t i) {
        LocalRank &local = *state.locals[i];
        streams[i]->enqueue_host(kind_name(call.kind),
                                 [collective, &local, s = send[i], r = recv[i], to = peers[i]] {
                                     collective->run(local, s, r, to);
                                 },
                                 {send[i].storage(), recv[i].storage()});
    };
    if (state.locals.size() == 1)
        return part(0);
    // A thread per rank; the first error of any is the caller's.
    std::vector<std::exception_ptr> errors(state.locals.size());
    {
        std::vector<std::jthread> threads;
        for (std::size_t i = 0; i < state.locals.size(); ++i)
            threads.emplace_back([&, i] {
                try {
                    part(i);
                } catch (...) {
                    errors[i] = std::current_exception();
                }
            });
    }
    for (const std::exception_ptr &e : errors)
        if (e)
            std::rethrow_exception(e);
}

} // namespace

void Communicator::all_reduce(std::span<Stream *const> streams, std::span<const Tensor> send,
                              std::span<const Tensor> recv, ReduceKind op) {
    const std::uint64_t count = send.empty() ? 0 : send[0].element_count();
    const DType type = send.empty() ? DType::Fp32 : send[0].dtype();
    queue(*state_, {CollectiveKind::AllReduce, link_reduce(op), type, count}, streams, send, recv);
}

void Communicator::reduce_scatter(std::span<Stream *const> streams, std::span<const Tensor> send,
                                  std::span<const Tensor> recv, ReduceKind op) {
    const std::uint64_t count = recv.empty() ? 0 : recv[0].element_count();
    const DType type = send.empty() ? DType::Fp32 : send[0].dtype();
    queue(*state_, {CollectiveKind::ReduceScatter, link_reduce(op), type, count}, streams, send,
          recv);
}

void Communicator::all_gather(std::span<Stream *const> streams, std::span<const Tensor> send,
                              std::span<const Tensor> recv) {
    const std::uint64_t count = send.empty() ? 0 : send[0].element_count();
    const DType type = send.empty() ? DType::Fp32 : send[0].dtype();
    queue(*state_, {CollectiveKind::AllGather, LinkReduce::Copy, type, count}, streams, send, recv);
}

void Communicator::broadcast(std::span<Stream *const> streams, std::span<const Tensor> send,
                             std::span<const Tensor> recv, std::uint32_t root) {
    if (root >= state_->nranks)
        throw Error(ErrorCode::InvalidArgument, "broadcast: root " + std::to_string(root) + " of " +
                                                    std::to_string(state_->nranks) + " ranks");
    const std::uint64_t count = recv.empty() ? 0 : recv[0].element_count();
    const DType type = recv.empty() ? DType::Fp32 : recv[0].dtype();
    queue(*state_, {CollectiveKind::Broadcast, LinkReduce::Copy, type, count, root}, streams, send,
          recv);
}

void Communicator::all_to_all(std::span<Stream *const> streams, std::span<const Tensor> send,
                              std::span<const Tensor> recv) {
    const std::uint64_t count = send.empty() ? 0 : send[0].element_count() / state_->nranks;
    const DType type = send.empty() ? DType::Fp32 : send[0].dtype();
    queue(*state_, {CollectiveKind::AllToAll, LinkReduce::Copy, type, count}, streams, send, recv);
}

void Communicator::send_recv(std::span<Stream *const> streams, std::span<const Tensor> send,
                             std::span<const Tensor> recv, std::span<const std::uint32_t> send_to,
                             std::span<const std::uint32_t> recv_from) {
    queue(*state_, {CollectiveKind::SendRecv}, streams, send, recv, send_to, recv_from);
}

} // namespace tpurt
