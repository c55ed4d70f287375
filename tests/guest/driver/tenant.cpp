// SPDX-License-Identifier: MIT
// tenant.cpp - the reset and queue tests' files of the card (tenant.hpp).
#include "tenant.hpp"

#include "guest_programs.hpp"
#include "tpurt/codegen/program_builder.hpp"

#include <catch2/catch.hpp>

#include <tpu_hw.h>

#include <cstring>
#include <vector>

namespace tenants {

Tenant::Tenant(std::uint8_t value)
    : device(tpurt::Device::open(0)), src_(device.allocate(TPU_PAGE_SIZE)),
      dst_(device.allocate(TPU_PAGE_SIZE)), value_(value) {
    std::memset(src_.data(), value, kBytes);
}

std::unique_ptr<fences::FencedJob> Tenant::copy(std::uint32_t priority) {
    return std::make_unique<fences::FencedJob>(
        device,
        tpurt::ProgramBuilder()
            .dma_in(guest::int8_rows(src_.device_addr(), 0, 1, kBytes))
            .dma_out(guest::int8_rows(dst_.device_addr(), 0, 1, kBytes))
            .halt()
            .finish(),
        std::vector<const tpurt::Buffer *>{&src_, &dst_}, priority);
}

std::unique_ptr<fences::FencedJob> Tenant::busy(unsigned matmuls, std::uint32_t priority) {
    return std::make_unique<fences::FencedJob>(device, guest::busy_program(matmuls),
                                               std::vector<const tpurt::Buffer *>{}, priority);
}

bool Tenant::copied() const {
    const auto *out = static_cast<const std::uint8_t *>(dst_.data());
    return out[0] == value_ && out[kBytes - 1] == value_;
}

std::uint32_t status_of(const fences::FencedJob &job) {
    struct drm_tpu_wait r;
    REQUIRE(job.wait(r) == 0);
    INFO("job " << job.id() << ": WAIT status " << r.status);
    CHECK(fences::fence_status(job.sync_file()) == fences::expected_fence_status(r.status));
    return r.status;
}

} // namespace tenants
