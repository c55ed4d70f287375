// SPDX-License-Identifier: MIT
// plan_runner.cpp - submits a plan's programs and waits for them (see plan_runner.hpp).
#include "plan_runner.hpp"

#include <deque>

namespace tpurt::detail {

namespace {

constexpr std::size_t max_jobs_in_flight = 32;

} // namespace

MatmulStats run_programs(Device &device, std::span<const Program> programs,
                         std::span<const Buffer *const> buffers, std::chrono::nanoseconds timeout) {
    // Keep a bounded number of jobs in flight: the driver limits jobs not yet waited for, and
    // each holds its program buffer.
    const auto start = std::chrono::steady_clock::now();
    MatmulStats stats;
    std::deque<Job> in_flight;
    for (const Program &program : programs) {
        if (in_flight.size() == max_jobs_in_flight) {
            stats += in_flight.front().wait(timeout);
            in_flight.pop_front();
        }
        in_flight.push_back(device.submit(program, buffers));
    }
    for (Job &job : in_flight)
        stats += job.wait(timeout);
    stats.wall = std::chrono::steady_clock::now() - start;
    stats.jobs = programs.size();
    return stats;
}

} // namespace tpurt::detail
