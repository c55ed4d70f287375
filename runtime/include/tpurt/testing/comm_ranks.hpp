// SPDX-License-Identifier: MIT
// comm_ranks.hpp - the ranks a process drives in a collective's test or benchmark: its cards,
// a stream on each, the stream pointers the Communicator's calls take, and one collective run
// by name on all of them.
#pragma once

#include "tpurt/collectives.hpp"
#include "tpurt/device.hpp"
#include "tpurt/stream.hpp"
#include "tpurt/testing/raw_values.hpp"

#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace tpurt {

struct CommRanks {
    std::vector<Device> devices;
    std::vector<std::unique_ptr<Stream>> streams;
    std::vector<Stream *> stream_ptrs; // streams[i].get(), for Communicator's calls

    explicit CommRanks(std::vector<Device> cards);
    // Waits for every rank's stream (the first error thrown).
    void synchronize();
    // Runs the collective `what` (all_reduce, reduce_scatter, all_gather, all_to_all, or
    // broadcast from the last rank) on every rank, waits, and returns each rank's recv.
    std::vector<RawValues> run(Communicator &comm, std::string_view what, ReduceKind op,
                               std::span<const Tensor> send, std::span<const Tensor> recv);
};

} // namespace tpurt
