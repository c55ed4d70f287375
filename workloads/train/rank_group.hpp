// SPDX-License-Identifier: MIT
// rank_group.hpp - the processes of a data-parallel run that drives one card a process
// (tpu-train-mpi over a pod, tools/pod/README.md), as the training code sees them: this
// process's card and communicator, its rank, every rank's place, and the two exchanges the
// training needs besides the gradients, which the cards' links carry (an all-gather of a few
// words and a barrier). tpu-train, one process driving every card, has none. The MPI
// implementation is tools/pod/mpi_rank_group.hpp; this code knows nothing of MPI.
#pragma once

#include <tpurt/collectives.hpp>
#include <tpurt/device.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tpu_train {

// Where a rank's card is.
struct RankCard {
    std::uint32_t x = 0, y = 0; // its fabric coordinates
    std::string host;           // the machine (VM) that drives it
};

class RankGroup {
  public:
    virtual ~RankGroup() = default;
    // This process's rank in the communicator (its card's place on the fabric's ring): the
    // share of every batch it trains, as rank `rank()` of `tpu-train --cards size()` would.
    virtual std::size_t rank() const = 0;
    virtual std::size_t size() const = 0;
    virtual tpurt::Device device() const = 0;
    virtual tpurt::Communicator communicator() const = 0;
    // Per communicator rank.
    virtual const std::vector<RankCard> &cards() const = 0;
    // Every rank's `mine` (the same count on every rank), concatenated in communicator rank order.
    virtual std::vector<std::uint64_t> all_gather(std::span<const std::uint64_t> mine) = 0;
    // Returns once every rank has called it.
    virtual void barrier() = 0;
};

} // namespace tpu_train
