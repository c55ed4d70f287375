// SPDX-License-Identifier: MIT
// c_api_collectives.cpp - the C API of the communicators and their collectives (tpurt.h, API
// versions 4 and 5; the C forms of collectives.hpp).
#include "c_api/c_api_internal.hpp"
#include "tpurt/collectives.hpp"

#include <algorithm>
#include <vector>

struct tpurt_comm {
    tpurt::Communicator comm;
};

using namespace tpurt::c_api;

namespace {

tpurt::CommOptions options_of(std::uint32_t timeout_ms) {
    tpurt::CommOptions options;
    if (timeout_ms)
        options.timeout = std::chrono::milliseconds(timeout_ms);
    return options;
}

tpurt::ReduceKind op_of(std::uint32_t op, const char *call) {
    if (op > TPURT_COMM_MIN)
        throw tpurt::Error(tpurt::ErrorCode::InvalidArgument,
                           std::string(call) + ": op " + std::to_string(op) +
                               " is none of TPURT_COMM_SUM, _MAX, _MIN");
    return static_cast<tpurt::ReduceKind>(op);
}

// The per-rank arrays of a collective call, checked.
struct Operands {
    std::vector<tpurt::Stream *> streams;
    std::vector<tpurt::Tensor> send, recv;

    Operands(tpurt_comm *comm, tpurt_stream *const *s, tpurt_tensor *const *in,
             tpurt_tensor *const *out, const char *call) {
        require(comm, call, "comm");
        require(s, call, "streams");
        require(in, call, "send");
        require(out, call, "recv");
        for (std::size_t i = 0; i < comm->comm.local_ranks().size(); ++i) {
            require(s[i], call, "a stream");
            require(in[i], call, "a send tensor");
            require(out[i], call, "a recv tensor");
            streams.push_back(&s[i]->stream);
            send.push_back(in[i]->tensor);
            recv.push_back(out[i]->tensor);
        }
    }
};

} // namespace

extern "C" {

int tpurt_comm_id_make(struct tpurt_comm_id *out) {
    return guarded([&] {
        require(out, "tpurt_comm_id_make", "out");
        const tpurt::CommId id = tpurt::CommId::make();
        std::copy(id.bytes.begin(), id.bytes.end(), out->bytes);
        return TPURT_OK;
    });
}

int tpurt_comm_init_all(tpurt_device *const *devices, uint32_t count, uint32_t timeout_ms,
                        tpurt_comm **out) {
    return guarded([&] {
        require(devices, "tpurt_comm_init_all", "devices");
        require(out, "tpurt_comm_init_all", "out");
        std::vector<tpurt::Device> list;
        for (uint32_t i = 0; i < count; ++i) {
            require(devices[i], "tpurt_comm_init_all", "a device");
            list.push_back(devices[i]->device);
        }
        *out =
            new tpurt_comm{tpurt::Communicator::init_all(std::move(list), options_of(timeout_ms))};
        return TPURT_OK;
    });
}

int tpurt_comm_init_rank(tpurt_device *dev, uint32_t nranks, const struct tpurt_comm_id *id,
                         uint32_t rank, uint32_t timeout_ms, tpurt_comm **out) {
    return guarded([&] {
        require(dev, "tpurt_comm_init_rank", "dev");
        require(id, "tpurt_comm_init_rank", "id");
        require(out, "tpurt_comm_init_rank", "out");
        tpurt::CommId cid;
        std::copy(id->bytes, id->bytes + cid.bytes.size(), cid.bytes.begin());
        *out = new tpurt_comm{
            tpurt::Communicator::init_rank(dev->device, nranks, cid, rank, options_of(timeout_ms))};
        return TPURT_OK;
    });
}

void tpurt_comm_destroy(tpurt_comm *comm) {
    delete comm;
}

int tpurt_comm_local_ranks(const tpurt_comm *comm, uint32_t *out) {
    return guarded([&] {
        require(comm, "tpurt_comm_local_ranks", "comm");
        require(out, "tpurt_comm_local_ranks", "out");
        *out = static_cast<uint32_t>(comm->comm.local_ranks().size());
        return TPURT_OK;
    });
}

int tpurt_comm_all_reduce(tpurt_comm *comm, tpurt_stream *const *streams, tpurt_tensor *const *send,
                          tpurt_tensor *const *recv, uint32_t op) {
    return guarded([&] {
        Operands o(comm, streams, send, recv, "tpurt_comm_all_reduce");
        comm->comm.all_reduce(o.streams, o.send, o.recv, op_of(op, "tpurt_comm_all_reduce"));
        return TPURT_OK;
    });
}

int tpurt_comm_reduce_scatter(tpurt_comm *comm, tpurt_stream *const *streams,
                              tpurt_tensor *const *send, tpurt_tensor *const *recv, uint32_t op) {
    return guarded([&] {
        Operands o(comm, streams, send, recv, "tpurt_comm_reduce_scatter");
        comm->comm.reduce_scatter(o.streams, o.send, o.recv,
                                  op_of(op, "tpurt_comm_reduce_scatter"));
        return TPURT_OK;
    });
}

int tpurt_comm_all_gather(tpurt_comm *comm, tpurt_stream *const *streams, tpurt_tensor *const *send,
                          tpurt_tensor *const *recv) {
    return guarded([&] {
        Operands o(comm, streams, send, recv, "tpurt_comm_all_gather");
        comm->comm.all_gather(o.streams, o.send, o.recv);
        return TPURT_OK;
    });
}

int tpurt_comm_broadcast(tpurt_comm *comm, tpurt_stream *const *streams, tpurt_tensor *const *send,
                         tpurt_tensor *const *recv, uint32_t root) {
    return guarded([&] {
        Operands o(comm, streams, send, recv, "tpurt_comm_broadcast");
        comm->comm.broadcast(o.streams, o.send, o.recv, root);
        return TPURT_OK;
    });
}

int tpurt_comm_all_to_all(tpurt_comm *comm, tpurt_stream *const *streams, tpurt_tensor *const *send,
                          tpurt_tensor *const *recv) {
    return guarded([&] {
        Operands o(comm, streams, send, recv, "tpurt_comm_all_to_all");
        comm->comm.all_to_all(o.streams, o.send, o.recv);
        return TPURT_OK;
    });
}

int tpurt_comm_send_recv(tpurt_comm *comm, tpurt_stream *const *streams, tpurt_tensor *const *send,
                         tpurt_tensor *const *recv, const uint32_t *send_to,
                         const uint32_t *recv_from) {
    return guarded([&] {
        const char *call = "tpurt_comm_send_recv";
        require(comm, call, "comm");
        require(streams, call, "streams");
        require(send, call, "send");
        require(recv, call, "recv");
        require(send_to, call, "send_to");
        require(recv_from, call, "recv_from");
        const std::size_t n = comm->comm.local_ranks().size();
        // A rank without a peer may pass NULL for that tensor, which is then not used: the
        // rank's other tensor stands in for it.
        std::vector<tpurt::Stream *> s;
        std::vector<tpurt::Tensor> in, out;
        for (std::size_t i = 0; i < n; ++i) {
            require(streams[i], call, "a stream");
            s.push_back(&streams[i]->stream);
            if (send_to[i] != TPURT_COMM_NONE)
                require(send[i], call, "a send tensor");
            if (recv_from[i] != TPURT_COMM_NONE)
                require(recv[i], call, "a recv tensor");
            require(send[i] ? send[i] : recv[i], call, "one of a rank's two tensors");
            in.push_back((send[i] ? send[i] : recv[i])->tensor);
            out.push_back((recv[i] ? recv[i] : send[i])->tensor);
        }
        comm->comm.send_recv(s, in, out, {send_to, n}, {recv_from, n});
        return TPURT_OK;
    });
}

int tpurt_comm_async_error(const tpurt_comm *comm) {
    return guarded([&] {
        require(comm, "tpurt_comm_async_error", "comm");
        if (const std::exception_ptr error = comm->comm.async_error())
            std::rethrow_exception(error);
        return TPURT_OK;
    });
}

int tpurt_comm_abort(tpurt_comm *comm) {
    return guarded([&] {
        require(comm, "tpurt_comm_abort", "comm");
        comm->comm.abort();
        return TPURT_OK;
    });
}

} // extern "C"
