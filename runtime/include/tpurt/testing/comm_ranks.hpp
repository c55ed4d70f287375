// SPDX-License-Identifier: MIT
// comm_ranks.hpp - the ranks a process drives in a collective's test or benchmark: its cards,
// a stream on each, and the stream pointers the Communicator's calls take.
#pragma once

#include "tpurt/device.hpp"
#include "tpurt/stream.hpp"

#include <memory>
#include <vector>

namespace tpurt {

struct CommRanks {
    std::vector<Device> devices;
    std::vector<std::unique_ptr<Stream>> streams;
    std::vector<Stream *> stream_ptrs; // streams[i].get(), for Communicator's calls

    explicit CommRanks(std::vector<Device> cards);
    // Waits for every rank's stream (the first error thrown).
    void synchronize();
};

} // namespace tpurt
