// SPDX-License-Identifier: MIT
// rank_group.cpp - a data-parallel run's processes and their exchanges over the cards' links
// (rank_group.hpp).
#include "rank_group.hpp"

#include <tpurt/tensor.hpp>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace tpu_train {

RankGroup::RankGroup(tpurt::Device device, tpurt::Communicator comm, std::vector<RankCard> cards)
    : device_(std::move(device)), comm_(std::move(comm)), cards_(std::move(cards)),
      stream_(device_) {
    if (comm_.local_ranks().size() != 1 || cards_.size() != comm_.nranks())
        throw std::invalid_argument(
            "a rank group wants a communicator of one rank in this process and a card a rank, "
            "not " +
            std::to_string(comm_.local_ranks().size()) + " local ranks and " +
            std::to_string(cards_.size()) + " cards for " + std::to_string(comm_.nranks()));
    rank_ = comm_.local_ranks()[0];
}

std::vector<std::uint64_t> RankGroup::all_gather(std::span<const std::uint64_t> mine) {
    // The words as int32 pairs: the collectives move any dtype bit for bit.
    const std::size_t n = 2 * mine.size();
    std::vector<std::int32_t> words(n);
    std::memcpy(words.data(), mine.data(), mine.size_bytes());
    const tpurt::Tensor send =
        tpurt::Tensor::from_host<std::int32_t>(device_, words, {std::max<std::size_t>(n, 1)});
    const tpurt::Tensor recv =
        tpurt::Tensor::empty(device_, tpurt::DType::Int32, {std::max<std::size_t>(n, 1) * size()});
    tpurt::Stream *s = &stream_;
    comm_.all_gather({&s, 1}, {&send, 1}, {&recv, 1});
    stream_.synchronize();
    const std::vector<std::int32_t> got = recv.to_vector<std::int32_t>();
    std::vector<std::uint64_t> all(mine.size() * size());
    for (std::size_t r = 0; r < size(); ++r)
        std::memcpy(all.data() + r * mine.size(), got.data() + r * std::max<std::size_t>(n, 1),
                    mine.size_bytes());
    return all;
}

void RankGroup::barrier() {
    const std::uint64_t nothing = 0;
    all_gather({&nothing, 1});
}

} // namespace tpu_train
