// SPDX-License-Identifier: MIT
// parallel_summary.hpp - the end of a data-parallel run's output: images/s in wall time and in
// modelled card time, the modelled compute / all-reduce split and weak-scaling efficiency
// (tpu-train --cards N), and for a run of one process a card (tpu-train-mpi, a RankGroup) the
// same over the ranks and a row per rank: its throughput, its step and all-reduce, and the
// modelled time its card's links send per step inside its server and to other servers.
#pragma once

#include "data_parallel.hpp"
#include "rank_group.hpp"

#include <tpurt/collectives.hpp>
#include <tpurt/device_info.hpp>

#include <cstddef>
#include <cstdint>
#include <span>

namespace tpu_train {

// The modelled weak-scaling efficiency is per-card throughput on N cards against one card that
// runs a card's share of the batch alone (whose step is the step's compute part: the same jobs
// without the collectives). Prints nothing before a step.
void print_parallel_summary(const ModelledSteps &m, const tpurt::DeviceInfo &info,
                            std::size_t cards);

// Every rank calls it (it gathers every rank's figures); rank 0 prints. `m`: this rank's
// figures; `bucket_bytes`: the bytes each step all-reduces, per bucket (DataParallel). The
// summary over the ranks takes the slowest rank's totals and wall time.
void print_group_summary(RankGroup &group, const ModelledSteps &m, const tpurt::Communicator &comm,
                         std::span<const std::uint64_t> bucket_bytes,
                         const tpurt::DeviceInfo &info);

} // namespace tpu_train
