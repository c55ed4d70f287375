// SPDX-License-Identifier: MIT
// lr_schedule.cpp - constant and cosine learning-rate schedules (lr_schedule.hpp).
#include "tpu_model/lr_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace tpu_model {

LrScheduleKind parse_lr_schedule(const std::string &name) {
    if (name == "constant")
        return LrScheduleKind::Constant;
    if (name == "cosine")
        return LrScheduleKind::Cosine;
    throw std::invalid_argument("learning-rate schedule '" + name +
                                "': not one of constant, cosine");
}

LrSchedule::LrSchedule(LrScheduleKind kind, float base, std::uint64_t total_steps)
    : kind_(kind), base_(base), total_(total_steps) {
    if (total_steps == 0)
        throw std::invalid_argument("learning-rate schedule over zero steps");
}

float LrSchedule::at(std::uint64_t step) const {
    if (kind_ == LrScheduleKind::Constant)
        return base_;
    // Step t of T gets base x (1 + cos(pi t / T)) / 2: the base at t = 0, base / T^2-small at
    // the last step t = T - 1, never exactly zero while training.
    const double t = double(std::min(step, total_ - 1));
    return float(double(base_) * 0.5 * (1.0 + std::cos(std::numbers::pi * t / double(total_))));
}

} // namespace tpu_model
