// SPDX-License-Identifier: MIT
// link_time.hpp - the modelled time each port of a rank's card sends during an all-reduce, by
// the alpha-beta model of the algorithm the communicator runs for its size (collectives.hpp,
// "Algorithms"; bench/collectives/perf_model.hpp has the collective's whole time): a step of a
// lane's ring costs one hop's latency plus its chunk at the link's bandwidth on the port toward
// the next card of that ring. tpu-train-mpi's summary splits a rank's link time with it between
// the links inside its server and those to other servers. A model, not a measurement: the card
// counts cycles per job, not per link.
#pragma once

#include "rank_group.hpp"

#include <tpurt/collectives.hpp>
#include <tpurt/device_info.hpp>

#include <array>
#include <cstdint>
#include <span>

namespace tpu_train {

// Nanoseconds each port (0 .. 3) of rank `rank`'s card (on `ici`) sends during an all-reduce of
// `bytes` a rank on `comm`, whose ranks' cards are `cards` (per communicator rank).
std::array<double, 4> all_reduce_port_ns(const tpurt::Communicator &comm,
                                         std::span<const RankCard> cards, std::uint32_t rank,
                                         const tpurt::IciPlace &ici, std::uint64_t bytes);

// The port of the card on `ici` that leads to the card at (x, y): the lowest one other than
// `not_port` if there is one, else the lowest; ici.ports if none does.
std::uint32_t port_to(const tpurt::IciPlace &ici, std::uint32_t x, std::uint32_t y,
                      std::uint32_t not_port = ~0u);

} // namespace tpu_train
