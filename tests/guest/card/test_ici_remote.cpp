// SPDX-License-Identifier: MIT
// test_ici_remote - links to a card in another QEMU process (docs/hardware.md section 10, "Links
// to other processes"), one side of each scenario; tests/vm/check-ici-sockets.sh starts the VMs,
// the fake peer or the monitor commands and runs these hidden cases:
//   [.remote]          (both VMs, one card each at x = 0 and 1 of a ring of two, both links over
//                      sockets) a buffer each way, intact and in hops x latency + bytes /
//                      bandwidth, and a receive-reduce of both cards' vectors, bit for bit
//   [.remote-victim]   (the VM the host kills) waits with its links up
//   [.remote-survivor] (the other) a SEND stalled for credits when the peer's QEMU is killed ends
//                      LINK_DOWN; the links read down with an error; a local job works
//   [.remote-garbage]  (one VM, port 0 on a socket a fake peer drives) a RECV waiting when the peer
//                      sends garbage ends LINK_DOWN; a local job works
//   [.link-down]       (one VM, two cards on a ring) a SEND stalled for credits ends LINK_DOWN when
//                      the host takes the link down (qom-set link-down), and works once it is up
// The two-VM cases meet at a barrier in a directory both share (run-in-vm.sh --out). Markers on
// stdout (TPU-ICI-...) tell the host script when to act.
#include "ici_cards.hpp"

#include <drm/tpu_accel.h>

#include <tpurt/codegen/program_builder.hpp>
#include <tpurt/tpurt.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using guest::ici_cards;
using guest::link_cycles;
using guest::sysfs_read;
using Card = guest::IciCard;

// Waits up to two minutes (the other VM boots meanwhile) for a port's state.
bool wait_state(const Card &c, unsigned port, const std::string &state) {
    for (int i = 0; i < 1200; i++) {
        if (sysfs_read(c.sysfs + "/ici_port" + std::to_string(port) + "/state") == state)
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
}

// Waits until the other VM's card x = other is ready too: each writes ready-<x> into the directory
// both VMs share (run-in-vm.sh --out, tpuout= on the kernel command line). A card's driver resets
// it when it loads, which empties its receive buffers (docs/hardware.md section 10), so neither
// side may send before the other's driver is up, however soon their links come up.
bool barrier(unsigned x, unsigned other) {
    std::string cmdline = sysfs_read("/proc/cmdline"), dir;
    const std::size_t at = cmdline.find("tpuout=");
    if (at == std::string::npos)
        return false;
    dir = cmdline.substr(at + 7, cmdline.find(' ', at) - at - 7);
    std::ofstream(dir + "/ready-" + std::to_string(x)) << "ready\n";
    for (int i = 0; i < 2400; i++) {
        if (std::ifstream(dir + "/ready-" + std::to_string(other)).good())
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
}

// Card x's vector: what both sides can compute.
std::vector<float> vector_of(unsigned x, std::size_t n) {
    std::mt19937_64 rng(100 + x);
    std::vector<float> v(n);
    for (float &f : v)
        f = float(std::ldexp(double(rng() % 2000001) - 1e6, int(rng() % 40) - 20));
    return v;
}

// A job's status: 0 if it ended well.
std::uint32_t status_of(tpurt::Job &job) {
    try {
        job.wait(std::chrono::seconds(120));
        return 0;
    } catch (const tpurt::JobError &e) {
        return e.status();
    }
}

// A copy through the card's unified buffer works, and its result is right.
void local_job_works(tpurt::Device &d) {
    constexpr std::uint32_t kBytes = 256 * 1024;
    tpurt::Buffer in = d.allocate(kBytes), out = d.allocate(kBytes);
    for (auto &w : in.as<std::uint32_t>())
        w = 0x5eed1234u;
    tpurt::ProgramBuilder b;
    b.dma_in({tpurt::DType::Fp32, in.device_addr(), 4096, 0, 4096, kBytes / 4096, 1024});
    b.dma_out({tpurt::DType::Fp32, out.device_addr(), 4096, 0, 4096, kBytes / 4096, 1024});
    tpurt::Job job = d.submit(b.halt().finish(), {&in, &out});
    CHECK(status_of(job) == 0);
    CHECK(std::memcmp(in.data(), out.data(), kBytes) == 0);
}

// A SEND of 8 MiB on port: more than the peer's buffer holds, so it stalls for credits.
tpurt::Job stalled_send(tpurt::Device &d, tpurt::Buffer &src, unsigned port) {
    tpurt::ProgramBuilder b;
    b.send({port, 9, src.device_addr(), std::uint32_t(src.size()), true}).halt();
    return d.submit(b.finish(), {&src});
}

} // namespace

TEST_CASE("cards in two VMs exchange buffers and reduce over socket links", "[.remote]") {
    auto cards = ici_cards();
    REQUIRE(cards.size() == 1);
    Card &me = cards[0];
    tpurt::Device &d = *me.device;
    const unsigned other = 1 - me.x;
    REQUIRE(wait_state(me, 0, "up"));
    REQUIRE(wait_state(me, 1, "up"));
    REQUIRE(barrier(me.x, other));
    std::cout << "TPU-ICI-UP" << std::endl;

    // A buffer each way: out on port 0, in on port 1 (the other card's port 0). 1 MiB fits the
    // receive buffer, so each SEND completes before the other card's RECV.
    constexpr std::uint32_t kBytes = 1u << 20;
    const std::vector<float> mine = vector_of(me.x, kBytes / 4),
                             theirs = vector_of(other, kBytes / 4);
    tpurt::Buffer src = d.allocate_copy(mine.data(), kBytes), dst = d.allocate(kBytes);
    std::memset(dst.data(), 0, kBytes);
    tpurt::ProgramBuilder sb, rb;
    sb.send({0, 1, src.device_addr(), kBytes, true}).halt();
    rb.recv({1, 1, dst.device_addr(), kBytes, true}).halt();
    tpurt::Job send_job = d.submit(sb.finish(), {&src});
    tpurt::Job recv_job = d.submit(rb.finish(), {&dst});
    const tpurt::JobStats sent = send_job.wait(std::chrono::seconds(120));
    const tpurt::JobStats got = recv_job.wait(std::chrono::seconds(120));
    CHECK(std::memcmp(dst.data(), theirs.data(), kBytes) == 0);
    // Both jobs count from cycle 0: the message arrived at hops x latency + bytes / bandwidth.
    CHECK(got.cycles == link_cycles(kBytes, d.info().clock_mhz, 400, 1000));
    CHECK(sent.cycles >= kBytes * 8ull * d.info().clock_mhz / 400000);

    // A receive-reduce: each card sends its vector on port 1 and sums the other's, arriving on
    // port 0, into its own: dst + msg, the same bits on both cards.
    constexpr std::uint32_t kChunk = 256 * 1024;
    tpurt::Buffer acc = d.allocate_copy(mine.data(), kChunk);
    tpurt::ProgramBuilder b;
    b.dma_in({tpurt::DType::Fp32, acc.device_addr(), 4096, 0, 4096, kChunk / 4096, 1024});
    b.send({1, 2, 0, kChunk});
    b.recv({0, 2, 0, kChunk, false, tpurt::LinkReduce::Sum, tpurt::DType::Fp32});
    b.dma_out({tpurt::DType::Fp32, acc.device_addr(), 4096, 0, 4096, kChunk / 4096, 1024});
    tpurt::Job reduce = d.submit(b.halt().finish(), {&acc});
    CHECK(status_of(reduce) == 0);
    const auto sum = acc.as<std::uint32_t>();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < kChunk / 4; i++)
        wrong += sum[i] != std::bit_cast<std::uint32_t>(mine[i] + theirs[i]);
    CHECK(wrong == 0);
    CHECK(sysfs_read(me.sysfs + "/ici_port0/errors") == "0");
    CHECK(sysfs_read(me.sysfs + "/ici_port1/rx_queued") == "0");
    std::cout << "TPU-ICI-REMOTE-DONE" << std::endl;
}

TEST_CASE("the card whose QEMU the host kills waits with its links up", "[.remote-victim]") {
    auto cards = ici_cards();
    REQUIRE(cards.size() == 1);
    REQUIRE(wait_state(cards[0], 0, "up"));
    REQUIRE(wait_state(cards[0], 1, "up"));
    REQUIRE(barrier(cards[0].x, 1 - cards[0].x));
    std::cout << "TPU-ICI-UP" << std::endl;
    std::this_thread::sleep_for(std::chrono::seconds(300));
    FAIL("this VM was to be killed");
}

TEST_CASE("a SEND stalled when the peer's QEMU is killed ends LINK_DOWN", "[.remote-survivor]") {
    auto cards = ici_cards();
    REQUIRE(cards.size() == 1);
    Card &me = cards[0];
    REQUIRE(wait_state(me, 0, "up"));
    REQUIRE(wait_state(me, 1, "up"));
    REQUIRE(barrier(me.x, 1 - me.x));
    tpurt::Buffer src = me.device->allocate(8u << 20);
    tpurt::Job job = stalled_send(*me.device, src, 0);
    for (int i = 0; i < 600 && sysfs_read(me.sysfs + "/ici_port0/tx_packets") != "256"; i++)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    REQUIRE(sysfs_read(me.sysfs + "/ici_port0/tx_packets") == "256");
    std::cout << "TPU-ICI-WAITING" << std::endl; // the host kills the other QEMU now
    CHECK(status_of(job) == TPU_ERR_LINK_DOWN);
    CHECK(sysfs_read(me.sysfs + "/ici_port0/state") == "down");
    CHECK(sysfs_read(me.sysfs + "/ici_port1/state") == "down");
    CHECK(sysfs_read(me.sysfs + "/ici_port0/error") == "1");
    local_job_works(*me.device);
}

TEST_CASE("a RECV waiting when the peer sends garbage ends LINK_DOWN", "[.remote-garbage]") {
    auto cards = ici_cards();
    REQUIRE(cards.size() == 1);
    Card &me = cards[0];
    REQUIRE(wait_state(me, 0, "up")); // the fake peer's hello
    tpurt::ProgramBuilder b;
    b.recv({0, 5, 0, 4096}).halt();
    tpurt::Job job = me.device->submit(b.finish(), {});
    std::this_thread::sleep_for(std::chrono::seconds(1)); // the RECV waits by now
    std::cout << "TPU-ICI-WAITING" << std::endl;          // the fake peer sends garbage now
    CHECK(status_of(job) == TPU_ERR_LINK_DOWN);
    CHECK(sysfs_read(me.sysfs + "/ici_port0/state") == "down");
    CHECK(sysfs_read(me.sysfs + "/ici_port0/error") == "1");
    local_job_works(*me.device);
}

TEST_CASE("a link taken down on demand ends a stalled SEND LINK_DOWN and works once up",
          "[.link-down]") {
    auto cards = ici_cards();
    REQUIRE(cards.size() == 2);
    tpurt::Device &d0 = *cards[0].device, &d1 = *cards[1].device;
    tpurt::Buffer src = d1.allocate(8u << 20);
    // Card 1's port 1 reaches card 0's port 0, which does not receive: the SEND stalls.
    tpurt::Job job = stalled_send(d1, src, 1);
    for (int i = 0; i < 600 && sysfs_read(cards[1].sysfs + "/ici_port1/tx_packets") != "256"; i++)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    REQUIRE(sysfs_read(cards[1].sysfs + "/ici_port1/tx_packets") == "256");
    std::cout << "TPU-ICI-WAITING" << std::endl; // the host: qom-set ... link-down 1:1
    CHECK(status_of(job) == TPU_ERR_LINK_DOWN);
    CHECK(sysfs_read(cards[1].sysfs + "/ici_port1/state") == "down");
    CHECK(sysfs_read(cards[0].sysfs + "/ici_port0/state") == "down");
    CHECK(sysfs_read(cards[0].sysfs + "/ici_port0/rx_queued") == "0");
    CHECK(sysfs_read(cards[0].sysfs + "/ici_port1/state") == "up");
    local_job_works(d1);
    std::cout << "TPU-ICI-DOWN" << std::endl; // the host: qom-set ... link-up 1:1
    REQUIRE(wait_state(cards[1], 1, "up"));
    tpurt::Buffer in = d1.allocate(65536), out = d0.allocate(65536);
    for (auto &w : in.as<std::uint32_t>())
        w = 0xfeedf00du;
    tpurt::ProgramBuilder sb, rb;
    sb.send({1, 3, in.device_addr(), 65536, true}).halt();
    rb.recv({0, 3, out.device_addr(), 65536, true}).halt();
    tpurt::Job r = d0.submit(rb.finish(), {&out});
    tpurt::Job s = d1.submit(sb.finish(), {&in});
    CHECK(status_of(s) == 0);
    CHECK(status_of(r) == 0);
    CHECK(std::memcmp(in.data(), out.data(), 65536) == 0);
}
