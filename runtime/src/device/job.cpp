// SPDX-License-Identifier: MIT
// job.cpp - waiting for submitted jobs (the backend's job queue) and turning their completion
// into statistics or a JobError.
#include "tpurt/card/job.hpp"

#include "backend/backend.hpp"
#include "memory/buffer_pool.hpp"
#include "tpurt/error.hpp"

#include <tpu_hw.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace tpurt {

std::chrono::nanoseconds JobStats::modelled_time(const DeviceInfo &info) const {
    if (info.clock_mhz == 0)
        return std::chrono::nanoseconds(0);
    return std::chrono::nanoseconds(cycles * 1000 / info.clock_mhz);
}

double JobStats::utilisation(const DeviceInfo &info) const {
    const double peak =
        static_cast<double>(cycles) * static_cast<double>(info.peak_macs_per_cycle());
    return peak > 0 ? static_cast<double>(macs) / peak : 0.0;
}

JobStats &JobStats::operator+=(const JobStats &other) {
    cycles += other.cycles;
    macs += other.macs;
    link_cycles += other.link_cycles;
    link_tx_bytes += other.link_tx_bytes;
    link_rx_bytes += other.link_rx_bytes;
    wall += other.wall;
    return *this;
}

Job::Job(std::shared_ptr<detail::Backend> backend, std::uint64_t id,
         std::shared_ptr<detail::PooledBuffer> program)
    : backend_(std::move(backend)), id_(id), program_(std::move(program)),
      submitted_(std::chrono::steady_clock::now()) {}

Job &Job::operator=(Job &&other) noexcept {
    if (this != &other) {
        retire_quietly();
        backend_ = std::move(other.backend_);
        id_ = other.id_;
        program_ = std::move(other.program_);
        submitted_ = other.submitted_;
        retired_ = std::exchange(other.retired_, true);
    }
    return *this;
}

Job::~Job() {
    retire_quietly();
}

void Job::retire_quietly() noexcept {
    if (!backend_ || retired_)
        return;
    detail::JobRecord record;
    backend_->wait(id_, default_timeout.count(), false, record);
    retired_ = true;
    program_.reset();
}

JobStats Job::wait(std::chrono::nanoseconds timeout) {
    if (!backend_ || retired_)
        throw Error(ErrorCode::InvalidArgument,
                    "job " + std::to_string(id_) + " was already waited for");
    detail::JobRecord wait;
    const int err = backend_->wait(id_, timeout.count(), false, wait);
    if (err == ETIMEDOUT)
        throw Error(ErrorCode::Timeout, "job " + std::to_string(id_) + " still running after " +
                                            std::to_string(timeout.count() / 1000000) +
                                            " ms; wait again or check the card (dmesg)");
    if (err != 0)
        throw Error(ErrorCode::SystemCall,
                    "DRM_IOCTL_TPU_WAIT for job " + std::to_string(id_) + " on " +
                        backend_->name() + " failed: " + std::strerror(err),
                    err);
    retired_ = true;
    program_.reset();
    if (wait.status != TPU_ERR_NONE)
        throw JobError(id_, wait.status, wait.error_pc, wait.fault_addr);

    JobStats stats;
    stats.cycles = wait.cycles;
    stats.macs = wait.macs;
    stats.link_cycles = wait.link_cycles;
    stats.link_tx_bytes = wait.link_tx_bytes;
    stats.link_rx_bytes = wait.link_rx_bytes;
    stats.wall = std::chrono::steady_clock::now() - submitted_;
    return stats;
}

} // namespace tpurt
