// SPDX-License-Identifier: MIT
// test_unbind - tpu.ko unbound from the card through sysfs while a process still has the device
// open, buffers mapped and jobs queued and running (root only): the jobs end, the open file
// gets ENODEV, closing it afterwards is clean (the VM harness fails the run on any kernel
// warning or oops), and the driver binds again to a working card.
#include "guest_programs.hpp"
#include "raw_card.hpp"

#include <tpurt/tpurt.hpp>

#include <catch2/catch.hpp>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr unsigned kBusyMatmuls = 120; // ~16 G MACs: still running when the driver goes

// The WAIT of `job` fails with ENODEV: the device is gone.
void check_gone(tpurt::Job &job) {
    try {
        job.wait();
        FAIL("a job waited for after unbinding tpu.ko reported success");
    } catch (const tpurt::JobError &error) {
        FAIL(std::string("expected ENODEV, the job ended with ") + error.what());
    } catch (const tpurt::Error &error) {
        CHECK(error.code() == tpurt::ErrorCode::SystemCall);
        CHECK(error.sys_errno() == ENODEV);
    }
}

} // namespace

TEST_CASE("unbinding tpu.ko under an open file ends its jobs and binds again", "[unbind]") {
    const std::string card = raw::find_card();
    {
        tpurt::Device device = tpurt::Device::open(0);
        tpurt::Buffer data = device.allocate(TPU_PAGE_SIZE);
        std::memset(data.data(), 0x5a, 64);
        tpurt::Job busy = device.submit(guest::busy_program(kBusyMatmuls), {});
        tpurt::Job behind =
            device.submit(tpurt::ProgramBuilder()
                              .dma_in(guest::int8_rows(data.device_addr(), 0, 1, 64))
                              .dma_out(guest::int8_rows(data.device_addr() + 64, 0, 1, 64))
                              .halt()
                              .finish(),
                          {&data});
        // Let the busy job reach the card.
        std::this_thread::sleep_for(std::chrono::milliseconds(200));

        raw::unbind_driver(card);
        CHECK_FALSE(std::filesystem::exists(card + "/driver"));
        check_gone(busy);
        check_gone(behind);
        CHECK_THROWS_AS(device.allocate(TPU_PAGE_SIZE), tpurt::Error);
        // The mapping outlives the driver: the pages are the process's until it unmaps them.
        CHECK(static_cast<std::uint8_t *>(data.data())[0] == 0x5a);
    } // buffers unmapped and the file closed with the driver gone

    raw::bind_driver(card);
    tpurt::Device device = tpurt::Device::open(0);
    const std::uint32_t m = 37, k = 129, n = 65;
    const auto a = tpurt::random_int8(std::size_t{m} * k, 7);
    const auto b = tpurt::random_int8(std::size_t{k} * n, 8);
    std::vector<std::int32_t> got(std::size_t{m} * n), want(got.size());
    tpurt::matmul(device, a, b, got, m, k, n);
    tpurt::reference_matmul(a, b, want, m, k, n);
    CHECK(got == want);
}
