// SPDX-License-Identifier: MIT
// tenant.hpp - a file of the card as the reset and queue tests use it: its own device file, a
// source buffer holding a byte value and a destination buffer; jobs that copy one to the other
// or keep the card busy, each with its fence (fence_helpers.hpp), and the check that a job's
// WAIT status and its fence agree.
#pragma once

#include "fence_helpers.hpp"

#include <tpurt/tpurt.hpp>

#include <cstdint>
#include <memory>

namespace tenants {

class Tenant {
  public:
    // Bytes each copy job moves.
    static constexpr std::uint32_t kBytes = 256;

    explicit Tenant(std::uint8_t value);

    // A job copying src to dst through the unified buffer, at SUBMIT priority `priority`.
    std::unique_ptr<fences::FencedJob> copy(std::uint32_t priority = 0);
    // A job of `matmuls` large matmuls on nothing (guest::busy_program).
    std::unique_ptr<fences::FencedJob> busy(unsigned matmuls, std::uint32_t priority = 0);
    // Whether dst holds the value (a copy job ran).
    bool copied() const;

    tpurt::Device device;

  private:
    tpurt::Buffer src_, dst_;
    std::uint8_t value_;
};

// WAIT's status of `job`, checked against its fence.
std::uint32_t status_of(const fences::FencedJob &job);

} // namespace tenants
