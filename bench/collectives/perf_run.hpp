// SPDX-License-Identifier: MIT
// perf_run.hpp - one row of tpu-collectives-perf: a collective run on every rank of a
// communicator at one size, once to check it and then `iters` times timed, with its modelled
// card time (the ranks' jobs' cycles at the card's clock, from the runtime's profiler), its
// mean wall time and its wrong elements against the CPU reference in the documented reduction
// order (golden/reference_collectives.hpp).
#pragma once

#include "perf_model.hpp"

#include <tpurt/collectives.hpp>
#include <tpurt/golden/reference_collectives.hpp>
#include <tpurt/testing/comm_ranks.hpp>

#include <cstdint>
#include <vector>

namespace tpu::bench {

struct Measurement {
    RowSize size;
    double modelled_us = 0;  // the slowest rank's modelled card time of one run
    double wall_us = 0;      // a run's wall time, call to every stream synchronised, mean
    std::uint64_t wrong = 0; // elements unlike the reference, over the checked runs
};

class CollectiveBench {
  public:
    // Random inputs of up to max_bytes for each rank of `comm` (init_all over ranks.devices),
    // the same for every seed; starts the runtime's profiler.
    CollectiveBench(tpurt::CommRanks &ranks, tpurt::Communicator &comm, tpurt::DType type,
                    std::uint64_t max_bytes, unsigned seed = 1);

    // The row of `bytes` (row_size()): an untimed run checked against the reference, `iters`
    // timed runs, the last checked again (broadcast's root is rank 0, reductions sum). A size
    // of less than an element per rank gives a row of count 0 and runs nothing.
    Measurement run(CollectiveOp op, std::uint64_t bytes, std::uint32_t iters);

  private:
    std::vector<tpurt::RawValues> inputs(std::uint64_t count) const;
    // Each rank's output for a row of `bytes`, in the order of the algorithm it runs.
    std::vector<tpurt::RawValues> expected(CollectiveOp op, const std::vector<tpurt::RawValues> &in,
                                           std::uint64_t bytes) const;

    tpurt::CommRanks &ranks_;
    tpurt::Communicator &comm_;
    tpurt::DType type_;
    std::vector<tpurt::RawValues> data_; // each rank's inputs at the largest size
};

} // namespace tpu::bench
