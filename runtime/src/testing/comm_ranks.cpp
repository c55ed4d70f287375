// SPDX-License-Identifier: MIT
// comm_ranks.cpp - a stream on each rank's card, and a collective by name
// (testing/comm_ranks.hpp).
#include "tpurt/testing/comm_ranks.hpp"

#include "tpurt/error.hpp"

#include <string>

namespace tpurt {

CommRanks::CommRanks(std::vector<Device> cards) : devices(std::move(cards)) {
    for (Device &device : devices) {
        streams.push_back(std::make_unique<Stream>(device));
        stream_ptrs.push_back(streams.back().get());
    }
}

void CommRanks::synchronize() {
    for (const auto &stream : streams)
        stream->synchronize();
}

std::vector<RawValues> CommRanks::run(Communicator &comm, std::string_view what, ReduceKind op,
                                      std::span<const Tensor> send, std::span<const Tensor> recv) {
    if (what == "all_reduce")
        comm.all_reduce(stream_ptrs, send, recv, op);
    else if (what == "reduce_scatter")
        comm.reduce_scatter(stream_ptrs, send, recv, op);
    else if (what == "all_gather")
        comm.all_gather(stream_ptrs, send, recv);
    else if (what == "all_to_all")
        comm.all_to_all(stream_ptrs, send, recv);
    else if (what == "broadcast")
        comm.broadcast(stream_ptrs, send, recv, comm.nranks() - 1);
    else
        throw Error(ErrorCode::InvalidArgument, "no collective named " + std::string(what));
    synchronize();
    std::vector<RawValues> out;
    for (const Tensor &t : recv)
        out.push_back(read_raw(t));
    return out;
}

} // namespace tpurt
