// SPDX-License-Identifier: MIT
// collective_ops.cpp - the collectives of tpurt::Communicator (collectives.hpp): the operands
// checked, each local rank's part queued on its stream as host work that copies what the
// ring works on, launches the rank's cached ring program over it and waits for it with the
// communicator's timeout. Parts of several local ranks are queued from a thread each: a part
// whose stream is idle runs at once, and its program waits on the other ranks' links.
#include "collectives/comm_state.hpp"
#include "profile/profiler_record.hpp"
#include "tpurt/error.hpp"
#include "tpurt/profile.hpp"

#include <chrono>
#include <cstring>
#include <functional>
#include <thread>

namespace tpurt {

namespace {

using detail::CollectiveKind;
using detail::CommState;
using detail::LocalRank;

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
    std::uint64_t count = 0; // the elements of send (broadcast, all-reduce, all-gather) or recv
    std::uint32_t root = 0;
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

    // Rank `local`'s part: runs on its stream.
    void run(LocalRank &local, const Tensor &send, const Tensor &recv) {
        s_.check();
        std::lock_guard lock(local.mutex);
        const Tensor work = prepare(local, send, recv);
        const std::shared_ptr<const Executable> exe = executable(local, work);
        const std::uint64_t base = work.device_addr();
        const Buffer *buffers[] = {work.storage().get()};
        const auto start = std::chrono::steady_clock::now();
        JobStats stats;
        try {
            for (std::size_t j = 0; j < exe->program_count(); ++j)
                stats += local.device.launch(*exe, j, {&base, 1}, buffers).wait(s_.options.timeout);
        } catch (...) {
            s_.fail(std::current_exception());
            throw;
        }
        if (profiler::active())
            record(local, *exe, start, stats);
        if (call_.kind == CollectiveKind::ReduceScatter)
            std::memcpy(host_of(recv), host_of(work) + chunk_bytes() * local.rank, chunk_bytes());
    }

  private:
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
        return call_.kind == CollectiveKind::ReduceScatter ? call_.count * s_.nranks : call_.count;
    }
    std::uint64_t recv_count() const {
        return call_.kind == CollectiveKind::AllGather ? call_.count * s_.nranks : call_.count;
    }
    std::uint64_t chunk_bytes() const { return call_.count * element(); }

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
            std::memmove(host_of(recv) + bytes * local.rank, host_of(send), bytes);
            return recv;
        case CollectiveKind::ReduceScatter:
            break;
        }
        if (!local.scratch || local.scratch->size() < bytes)
            local.scratch = std::make_shared<Buffer>(local.device.allocate(bytes));
        const Tensor work(local.scratch, TensorLayout::contiguous(call_.type, {send_count()}));
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
            const std::uint64_t first = split ? k * n / s_.nranks : k * call_.count;
            const std::uint64_t last = split ? (k + 1) * n / s_.nranks : (k + 1) * call_.count;
            c[q] = {first * element(), (last - first) * element()};
        }
        return c;
    }

    std::shared_ptr<const Executable> executable(LocalRank &local, const Tensor &work) {
        std::string name = std::string(kind_name(call_.kind)) + " " + reduce_name(call_.reduce) +
                           " " + dtype_name(call_.type) + " " + std::to_string(call_.count);
        if (call_.kind == CollectiveKind::Broadcast)
            name += " root " + std::to_string(call_.root);
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
        c.ports = local.ports;
        c.piece_bytes = local.device.info().ici.credits * TPU_ICI_PACKET_BYTES;
        c.tag_base = s_.tag_base;
        c.chunks = chunks();
        auto exe = std::make_shared<const Executable>(Executable::link(
            name, {{"data", work.layout().data_bytes()}}, detail::compile_ring_collective(c)));
        local.executables.emplace(name, exe);
        return exe;
    }

    CommState &s_;
    Call call_;
};

// Queues each local rank's part on its stream, from a thread per rank when there are several.
void queue(CommState &state, Call call, std::span<Stream *const> streams,
           std::span<const Tensor> send, std::span<const Tensor> recv) {
    auto collective = std::make_shared<Collective>(state, call);
    collective->check(streams, send, recv);
    state.check();
    auto part = [&](std::size_t i) {
        LocalRank &local = *state.locals[i];
        streams[i]->enqueue_host(
            kind_name(call.kind),
            [collective, &local, s = send[i], r = recv[i]] { collective->run(local, s, r); },
            {send[i].storage(), recv[i].storage()});
    };
    if (state.locals.size() == 1)
        return part(0);
    std::vector<std::jthread> threads;
    for (std::size_t i = 0; i < state.locals.size(); ++i)
        threads.emplace_back(part, i);
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

} // namespace tpurt
