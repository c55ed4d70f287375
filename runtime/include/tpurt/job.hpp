// SPDX-License-Identifier: MIT
// job.hpp - tpurt::Job, a program submitted to the card, and the statistics its wait returns.
#pragma once

#include "tpurt/card/buffer.hpp"
#include "tpurt/device_info.hpp"

#include <chrono>
#include <cstdint>
#include <memory>

namespace tpurt {

namespace detail {
class Backend;
class PooledBuffer;
} // namespace detail

struct JobStats {
    std::uint64_t cycles = 0; // modelled cycles on the card
    std::uint64_t macs = 0;   // multiply-accumulates performed
    // Link work (SEND and RECV): modelled cycles link units were busy, bytes sent and received.
    // 0 on a card before spec 2.4, which does not report them per job.
    std::uint64_t link_cycles = 0;
    std::uint64_t link_tx_bytes = 0;
    std::uint64_t link_rx_bytes = 0;
    std::chrono::nanoseconds wall{0}; // from submission until the wait returned

    // Modelled card time at the card's clock.
    std::chrono::nanoseconds modelled_time(const DeviceInfo &info) const;
    // Fraction of the matrix unit's peak the job achieved in modelled cycles (0..1).
    double utilisation(const DeviceInfo &info) const;

    // Sums the card work of several jobs; wall times add up too.
    JobStats &operator+=(const JobStats &other);
};

class Job {
  public:
    static constexpr std::chrono::nanoseconds default_timeout = std::chrono::seconds(60);

    Job(Job &&) noexcept = default;
    Job &operator=(Job &&) noexcept;
    Job(const Job &) = delete;
    Job &operator=(const Job &) = delete;
    // Waits for a job nobody waited for (errors ignored), so it never outlives its program.
    ~Job();

    std::uint64_t id() const { return id_; }
    bool retired() const { return retired_; }

    // Waits until the job ends and retires it. Throws JobError if the card ended it with an
    // error, Error(Timeout) if it is still running after `timeout` (wait again later), and
    // Error(SystemCall) if the driver no longer knows it (waited twice).
    JobStats wait(std::chrono::nanoseconds timeout = default_timeout);

  private:
    friend class Device;
    Job(std::shared_ptr<detail::Backend> backend, std::uint64_t id,
        std::shared_ptr<detail::PooledBuffer> program);
    void retire_quietly() noexcept;

    std::shared_ptr<detail::Backend> backend_;
    std::uint64_t id_ = 0;
    // The buffer holding the job's program, back to its pool once the job has ended.
    std::shared_ptr<detail::PooledBuffer> program_;
    std::chrono::steady_clock::time_point submitted_;
    bool retired_ = false;
};

} // namespace tpurt
