// SPDX-License-Identifier: MIT
// card_recovery.hpp - what tpu-train does when the card fails under it: a job that hung (the
// driver's timeout reset its queue), a job ended by a queue or card reset, a file banned after
// repeated hangs. Such a failure loses the card's state of the step in flight, not the run: the
// trainer keeps a recovery point in host memory (the weights, the optimiser state and where the
// run was, read back every --snapshot-steps steps and at each epoch's end), opens the device
// again, puts the recovery point on the card and replays the steps from there. The data order and
// the learning-rate schedule are functions of the step, and a step's arithmetic is the same on a
// fresh card, so the replayed run ends bit for bit where an undisturbed run ends. Only the failures
// tpurt::is_retryable() names are replayed; any other error ends the run as before.
#pragma once

#include <tpu_model/checkpoint.hpp>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

namespace tpu_train {

// Where a run is: the epoch, the batches of it done, the optimiser steps taken (the index of the
// learning-rate schedule), and the epoch's running sums for its progress line and curves.
struct RunPosition {
    std::size_t epoch = 0;
    std::size_t batch = 0;
    std::uint64_t step = 0;
    double loss_sum = 0.0;
    std::size_t seen = 0;
    std::size_t correct = 0;
};

// A recovery point: the position and the model's state there (the weights and the optimiser's
// state as a checkpoint holds them).
struct RecoveryPoint {
    RunPosition at;
    tpu_model::Checkpoint state;
};

// Counts the failures recovered from and refuses to go on after `max_in_a_row` failures without a
// completed step in between (a card that fails every time is not going to come back).
class RecoveryBudget {
  public:
    explicit RecoveryBudget(std::size_t max_in_a_row) : max_in_a_row_(max_in_a_row) {}
    // A failure: returns whether to recover, and says so on stdout with what failed and where
    // the run goes back to.
    bool failed(const std::exception &e, const RunPosition &failed_at, const RunPosition &back_to);
    void progressed() { in_a_row_ = 0; }
    std::size_t recovered() const { return recovered_; }

  private:
    std::size_t max_in_a_row_;
    std::size_t in_a_row_ = 0;
    std::size_t recovered_ = 0;
};

} // namespace tpu_train
