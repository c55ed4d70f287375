// SPDX-License-Identifier: MIT
// comm_ranks.cpp - a stream on each rank's card (testing/comm_ranks.hpp).
#include "tpurt/testing/comm_ranks.hpp"

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

} // namespace tpurt
