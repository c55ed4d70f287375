// SPDX-License-Identifier: MIT
// in_process_fabric_test.cpp - in-process cards joined by one fabric
// (Device::open_in_process_fabric()): their places on a ring and a torus, a message sent from one
// card's memory arriving intact in another's (more than a receive buffer holds, so credits stall
// the sender), a link taken down ending the job LINK_DOWN, a RECV whose message never comes ended
// by the job timeout, and a running job aborted.
#include <tpurt/codegen/program_builder.hpp>
#include <tpurt/tpurt.hpp>

#include <drm/tpu_accel.h>
#include <tpu_hw.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace {

tpurt::Program send_program(const tpurt::Buffer &from, std::uint32_t port, std::uint32_t bytes) {
    return tpurt::ProgramBuilder()
        .send({.port = port, .tag = 5, .addr = from.device_addr(), .bytes = bytes, .host = true})
        .halt()
        .finish();
}

tpurt::Program recv_program(const tpurt::Buffer &to, std::uint32_t port, std::uint32_t bytes) {
    return tpurt::ProgramBuilder()
        .recv({.port = port, .tag = 5, .addr = to.device_addr(), .bytes = bytes, .host = true})
        .halt()
        .finish();
}

} // namespace

TEST_CASE("in-process cards on a fabric know their places", "[in-process][fabric]") {
    auto ring = tpurt::Device::open_in_process_fabric({.dim_x = 3, .credits = 16});
    REQUIRE(ring.size() == 3);
    for (std::uint32_t i = 0; i < 3; ++i) {
        const tpurt::IciPlace &ici = ring[i].info().ici;
        CHECK(ring[i].info().caps & TPU_CAP_ICI);
        CHECK(ici.topology == TPU_ICI_TOPO_RING);
        CHECK(ici.ports == 2);
        CHECK(ici.x == i);
        CHECK(ici.dim_x == 3);
        CHECK(ici.credits == 16);
        CHECK(ici.neighbour_x(0) == (i + 1) % 3);
        CHECK(ici.neighbour_x(1) == (i + 2) % 3);
    }
    auto torus = tpurt::Device::open_in_process_fabric({.torus = true, .dim_x = 2, .dim_y = 2});
    REQUIRE(torus.size() == 4);
    CHECK(torus[3].info().ici.ports == 4);
    CHECK(torus[3].info().ici.x == 1);
    CHECK(torus[3].info().ici.y == 1);
    CHECK_FALSE(tpurt::Device::open_in_process().info().ici.on_fabric());
    CHECK_THROWS_AS(tpurt::Device::open_in_process_fabric({.dim_x = 1}), tpurt::Error);
}

TEST_CASE("a message goes from one in-process card to its neighbour intact",
          "[in-process][fabric]") {
    auto cards = tpurt::Device::open_in_process_fabric({.dim_x = 2, .credits = 4});
    constexpr std::uint32_t bytes = 64 * 1024 + 12; // four times the receive buffer, and a tail
    tpurt::Buffer src = cards[0].allocate(bytes), dst = cards[1].allocate(bytes);
    for (std::uint32_t i = 0; i < bytes; ++i)
        static_cast<std::uint8_t *>(src.data())[i] = static_cast<std::uint8_t>(i * 7 + 3);
    // The sender stalls until the receiver takes packets: each card's job on its own thread.
    tpurt::JobStats got;
    std::thread receiver(
        [&] { got = cards[1].submit(recv_program(dst, 1, bytes), {&dst}).wait(); });
    const tpurt::JobStats sent = cards[0].submit(send_program(src, 0, bytes), {&src}).wait();
    receiver.join();
    CHECK(std::memcmp(src.data(), dst.data(), bytes) == 0);
    CHECK(sent.cycles > 0);
    CHECK(got.cycles >= sent.cycles);
}

TEST_CASE("a link taken down ends the in-process card's job LINK_DOWN", "[in-process][fabric]") {
    auto cards = tpurt::Device::open_in_process_fabric({.dim_x = 2});
    tpurt::Buffer src = cards[0].allocate(4096);
    cards[0].set_link(0, false);
    tpurt::Job job = cards[0].submit(send_program(src, 0, 4096), {&src});
    try {
        job.wait();
        FAIL("the SEND over a link that is down ended without an error");
    } catch (const tpurt::JobError &e) {
        CHECK(e.status() == TPU_ERR_LINK_DOWN);
    }
    cards[0].set_link(0, true);
    tpurt::Buffer dst = cards[1].allocate(4096);
    cards[0].submit(send_program(src, 0, 4096), {&src}).wait();
    cards[1].submit(recv_program(dst, 1, 4096), {&dst}).wait();
    CHECK_THROWS_AS(tpurt::Device::open_in_process().set_link(0, false), tpurt::Error);
}

TEST_CASE("a RECV whose message never comes ends at the job timeout, an abort at once",
          "[in-process][fabric]") {
    auto cards = tpurt::Device::open_in_process_fabric({.dim_x = 2}, {.job_timeout_ms = 200});
    tpurt::Buffer dst = cards[1].allocate(4096);
    try {
        cards[1].submit(recv_program(dst, 1, 4096), {&dst}).wait();
        FAIL("the RECV ended without an error");
    } catch (const tpurt::JobError &e) {
        CHECK(e.status() == DRM_TPU_JOB_TIMEOUT);
    }
    // A job that would wait for ever, aborted from another thread.
    auto patient = tpurt::Device::open_in_process_fabric({.dim_x = 2}, {.job_timeout_ms = 0});
    tpurt::Buffer dst2 = patient[1].allocate(4096);
    std::atomic<bool> ended = false;
    std::thread aborter([&] {
        while (!ended) {
            CHECK(patient[1].abort_running_job());
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    });
    std::uint32_t status = TPU_ERR_NONE;
    try {
        patient[1].submit(recv_program(dst2, 1, 4096), {&dst2}).wait();
    } catch (const tpurt::JobError &e) {
        status = e.status();
    }
    ended = true;
    aborter.join();
    CHECK(status == TPU_ERR_ABORTED);
}
