// SPDX-License-Identifier: MIT
// rank_group.hpp - the processes of a data-parallel run that drives one card a process
// (tpu-train-mpi over a pod, tools/pod/README.md), as the training code sees them: this
// process's card, its rank of the communicator over every card, every rank's place, and the
// exchanges the training needs besides the gradients' all-reduces: an all-gather of a few words
// (a step's losses, the replicas' hashes, the summary's figures) and a barrier. Both run over
// the cards' links (Communicator::all_gather), not over the network that bootstrapped the
// communicator, so that they fail as the gradients' collectives do: at once when a link goes
// down (a VM died), else at the communicator's timeout. tpu-train, one process driving every
// card, has no group.
#pragma once

#include <tpurt/collectives.hpp>
#include <tpurt/device.hpp>
#include <tpurt/stream.hpp>

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
    // This process's rank of `comm` (made by Communicator::init_rank on `device`); `cards`
    // per communicator rank. Throws std::invalid_argument if `comm` has not one local rank or
    // `cards` is not one a rank.
    RankGroup(tpurt::Device device, tpurt::Communicator comm, std::vector<RankCard> cards);
    RankGroup(const RankGroup &) = delete;
    RankGroup &operator=(const RankGroup &) = delete;

    // This process's rank (its card's place on the fabric's ring): the share of every batch it
    // trains, as rank `rank()` of `tpu-train --cards size()` would.
    std::size_t rank() const { return rank_; }
    std::size_t size() const { return cards_.size(); }
    tpurt::Device device() const { return device_; }
    tpurt::Communicator communicator() const { return comm_; }
    const std::vector<RankCard> &cards() const { return cards_; }

    // Every rank's `mine` (the same count on every rank), concatenated in rank order. Throws
    // tpurt::Error as the communicator's collectives do.
    std::vector<std::uint64_t> all_gather(std::span<const std::uint64_t> mine);
    // Returns once every rank has called it (or throws as all_gather()).
    void barrier();

  private:
    tpurt::Device device_;
    tpurt::Communicator comm_;
    std::vector<RankCard> cards_;
    std::size_t rank_ = 0;
    tpurt::Stream stream_; // the exchanges'
};

} // namespace tpu_train
