// SPDX-License-Identifier: MIT
// test_unmap.cpp - guest test of unmap safety (root: debugfs): a job keeps writing a buffer it
// does not list; the buffer is freed while the job runs, between two of its writes (the card's
// test-only hold, QEMU's x-test-hold, keeps it there: the card has the buffer's translation in
// its TLB). The driver clears the mapping, waits for the card's TLB invalidation to complete
// (TLB_INVAL_DONE, spec 1.3; counted in debugfs) and only then frees the pages, so the job's
// next write faults at the buffer's address instead of landing in freed memory, fresh buffers
// stay zero, and the card works on.
#include "fence_helpers.hpp"
#include "guest_programs.hpp"
#include "uapi_helpers.hpp"

#include <catch2/catch.hpp>

#include <tpurt/codegen/program_builder.hpp>
#include <tpurt/golden/reference.hpp>
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/tpurt.hpp>

#include <chrono>
#include <string>
#include <sys/mount.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

// A "name: value" line of the debugfs status file.
std::uint64_t status_value(const std::string &name) {
    return uapi::debugfs_status(uapi::debugfs_dir(), name);
}

// Writes 4 KiB of the unified buffer to `addr` after each of `rounds` matmuls (fp32, 2048 x 128
// x 128): LOAD_W at instruction 0, then round r's MATMUL at 2r + 1 and its DMA_OUT at 2r + 2.
tpurt::Program write_loop(std::uint64_t addr, unsigned rounds) {
    tpurt::ProgramBuilder builder;
    builder.load_weights(guest::packed_weights(tpurt::DType::Fp32, 128, 128));
    for (unsigned i = 0; i < rounds; i++) {
        builder.matmul(guest::packed_matmul(tpurt::DType::Fp32, 2048, 128, 128));
        builder.dma_out(guest::int8_rows(addr, 0, 1, TPU_PAGE_SIZE));
    }
    return builder.halt().finish();
}

} // namespace

TEST_CASE("a buffer freed under a job that writes it is never written once freed", "[unmap]") {
    tpurt::Device device = tpurt::Device::open(0);
    std::uint64_t addr = 0;
    const std::uint64_t invalidations = status_value("tlb_invalidations");
    std::unique_ptr<fences::FencedJob> job;
    // The job waits on the card before its second write (instruction 4), its first done.
    constexpr unsigned kSecondWrite = 4;
    uapi::CardHold hold(kSecondWrite);
    {
        tpurt::Buffer target = device.allocate(4 * TPU_PAGE_SIZE);
        addr = target.device_addr();
        // The job does not list the buffer: it holds no reference to it.
        job = std::make_unique<fences::FencedJob>(device, write_loop(addr, 8),
                                                  std::vector<const tpurt::Buffer *>{});
        REQUIRE(hold.wait_held()); // on the card, past its first write
        REQUIRE(hold.held() == kSecondWrite);
        REQUIRE(fences::fence_status(job->sync_file(), 0) == 0);
    } // unmapped and closed: the BO is freed while the job runs

    // The free waited for one completed invalidation of the file's context.
    CHECK(status_value("tlb_invalidations") == invalidations + 1);
    REQUIRE(hold.held() == kSecondWrite);
    hold.release();
    struct drm_tpu_wait r;
    REQUIRE(job->wait(r) == 0);
    CHECK(r.status == TPU_ERR_MMU_FAULT);
    CHECK(r.fault_addr == addr);
    CHECK(r.error_pc == kSecondWrite);

    // Memory handed out after the free stays as it was given: zero.
    std::vector<tpurt::Buffer> fresh;
    for (int i = 0; i < 16; i++)
        fresh.push_back(device.allocate(1 << 20));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::size_t nonzero = 0;
    for (const tpurt::Buffer &buffer : fresh) {
        const auto *bytes = static_cast<const std::uint8_t *>(buffer.data());
        for (std::size_t i = 0; i < buffer.size(); i++)
            nonzero += bytes[i] != 0;
    }
    CHECK(nonzero == 0);

    const auto a = tpurt::random_int8(64 * 64, 9);
    std::vector<std::int32_t> got(64 * 64), want(64 * 64);
    tpurt::matmul(device, a, a, got, 64, 64, 64);
    tpurt::reference_matmul(a, a, want, 64, 64, 64);
    CHECK(got == want);
}
