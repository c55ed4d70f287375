// SPDX-License-Identifier: MIT
// lr_schedule.hpp - the learning rate of each optimiser step, shared by the trainers on the CPU
// and on the card so that both follow the same schedule: constant, or cosine decay from the base
// rate at step 0 to zero at the last step of the run (half a cosine period over all steps).
#pragma once

#include <cstdint>
#include <string>

namespace tpu_model {

enum class LrScheduleKind { Constant, Cosine };

// "constant" or "cosine"; anything else throws std::invalid_argument naming the choices.
LrScheduleKind parse_lr_schedule(const std::string &name);

class LrSchedule {
  public:
    // `total_steps`: the optimiser steps of the whole run (epochs x batches per epoch), > 0.
    LrSchedule(LrScheduleKind kind, float base, std::uint64_t total_steps);

    // The rate of step `step` (0-based, counted over the whole run, so that a resumed run
    // continues the same curve); steps at or past the end get the last step's rate.
    float at(std::uint64_t step) const;

  private:
    LrScheduleKind kind_;
    float base_;
    std::uint64_t total_;
};

} // namespace tpu_model
