// SPDX-License-Identifier: MIT
// mpi_rank_group.hpp - the training's RankGroup (workloads/train/rank_group.hpp) over MPI for
// tpu-train-mpi: a pod rank bootstrapped by mpi_bootstrap.hpp, the exchanges MPI_Allgather and
// MPI_Barrier on MPI_COMM_WORLD, reordered from MPI's rank order into the communicator's.
#pragma once

#include "mpi_bootstrap.hpp"
#include "rank_group.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace tpu::pod {

class MpiRankGroup final : public tpu_train::RankGroup {
  public:
    explicit MpiRankGroup(PodRank pod);

    const Rank &me() const { return pod_.me; }

    std::size_t rank() const override { return pod_.me.fabric; }
    std::size_t size() const override { return static_cast<std::size_t>(pod_.me.size); }
    tpurt::Device device() const override { return pod_.card; }
    tpurt::Communicator communicator() const override { return pod_.comm; }
    const std::vector<tpu_train::RankCard> &cards() const override { return cards_; }
    std::vector<std::uint64_t> all_gather(std::span<const std::uint64_t> mine) override;
    void barrier() override;

  private:
    PodRank pod_;
    std::vector<tpu_train::RankCard> cards_; // per communicator rank
};

} // namespace tpu::pod
