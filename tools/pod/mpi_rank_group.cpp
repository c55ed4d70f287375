// SPDX-License-Identifier: MIT
// mpi_rank_group.cpp - the training's RankGroup over MPI (mpi_rank_group.hpp).
#include "mpi_rank_group.hpp"

#include <mpi.h>

namespace tpu::pod {

MpiRankGroup::MpiRankGroup(PodRank pod) : pod_(std::move(pod)), cards_(pod_.places.size()) {
    // bootstrap() checked that the card ranks are those of the fabric, each once.
    for (const RankPlace &p : pod_.places)
        cards_.at(p.fabric) = {p.x, p.y, p.host};
}

std::vector<std::uint64_t> MpiRankGroup::all_gather(std::span<const std::uint64_t> mine) {
    const int n = static_cast<int>(mine.size());
    std::vector<std::uint64_t> by_world(mine.size() * size()), by_rank(by_world.size());
    MPI_Allgather(mine.data(), n, MPI_UINT64_T, by_world.data(), n, MPI_UINT64_T, MPI_COMM_WORLD);
    for (std::size_t w = 0; w < size(); ++w)
        std::copy_n(by_world.begin() + static_cast<std::ptrdiff_t>(w * mine.size()), mine.size(),
                    by_rank.begin() +
                        static_cast<std::ptrdiff_t>(pod_.places[w].fabric * mine.size()));
    return by_rank;
}

void MpiRankGroup::barrier() {
    MPI_Barrier(MPI_COMM_WORLD);
}

} // namespace tpu::pod
