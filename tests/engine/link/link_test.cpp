// SPDX-License-Identifier: MIT
// The inter-chip links (spec 2.0, docs/hardware.md section 10) on engines joined by a fabric:
// the modelled time of a transfer against hops x latency + bytes / bandwidth, data moved intact
// from 8 B to 64 MiB, credits that stall a sender instead of losing data, aborts that end a
// blocked SEND or RECV, a peer that leaves, and every malformed link instruction's status. The
// receive-reduce's numerics are link_reduce_test.cpp's.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <future>
#include <random>
#include <thread>

#include "abort_when_running.hpp"
#include "link/link_cost.hpp"
#include "link_rig.hpp"
#include "rig.hpp"

using namespace tpu::test;
using Clock = std::chrono::steady_clock;

namespace {

std::vector<uint8_t> random_bytes(uint64_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<uint8_t> v(n);
    for (uint64_t i = 0; i < n; i += 8) {
        const uint64_t r = rng();
        std::memcpy(v.data() + i, &r, std::min<uint64_t>(8, n - i));
    }
    return v;
}

// The link time as a real number of cycles: hops x latency + bytes / bandwidth.
double exact_cycles(uint64_t hops, uint64_t bytes, double clock_mhz, double gbps, double hop_ns) {
    const double ns = double(hops) * hop_ns + double(bytes) * 8.0 / gbps;
    return ns * clock_mhz / 1000.0;
}

// Waits up to 10 s for pred.
template <class Pred> bool eventually(Pred pred) {
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (!pred()) {
        if (Clock::now() > deadline)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

tpu_link_port_info port_info(tpu_engine *eng, uint32_t port) {
    tpu_link_port_info info;
    REQUIRE(tpu_engine_port_info(eng, port, &info));
    return info;
}

} // namespace

TEST_CASE("link: the cost formula is hops x latency + bytes / bandwidth within 1%", "[link]") {
    for (uint32_t clock : {700u, 940u})
        for (uint32_t gbps : {360u, 400u, 800u})
            for (uint64_t hops = 1; hops <= 4; hops++)
                for (uint64_t bytes = 8; bytes <= (64u << 20); bytes *= 2) {
                    const double exact = exact_cycles(hops, bytes, clock, gbps, 1000);
                    const uint64_t got =
                        tpu::engine::cycles::link_transfer(hops, bytes, clock, gbps, 1000);
                    INFO(hops << " hops, " << bytes << " bytes, " << gbps << " Gbit/s");
                    CHECK(double(got) >= exact);
                    CHECK(double(got) < exact + 1.0); // rounded up once
                    CHECK(std::abs(double(got) - exact) / exact < 0.01);
                }
}

TEST_CASE("link: a transfer from 8 B to 64 MiB arrives intact after hops x latency + bytes / "
          "bandwidth",
          "[link]") {
    const uint32_t mode = GENERATE(TPU_ENGINE_FAST, TPU_ENGINE_CYCLE_ACCURATE);
    constexpr uint64_t kMax = 64u << 20;
    LinkRig rig(LinkRig::ring(2), mode, kMax);
    constexpr uint64_t kDst = LinkRig::kHost;
    for (uint64_t bytes : std::initializer_list<uint64_t>{8, 100, 4096, 4097, 65536, 1u << 20,
                                                          3000001, 16u << 20, kMax}) {
        INFO(bytes << " bytes");
        const std::vector<uint8_t> data = random_bytes(bytes, bytes);
        rig.space(0).write(LinkRig::kHost, data.data(), bytes);
        // Card 0's +x port reaches card 1's -x port.
        const auto start = Clock::now();
        const auto results = rig.run_all(
            {{send(0, 7, LinkRig::kHost, uint32_t(bytes), TPU_F_LINK_HOST), halt()},
             {recv(1, 7, kDst, uint32_t(bytes), TPU_LINK_COPY, 0, TPU_F_LINK_HOST), halt()}});
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        if (bytes == kMax) { // the emulator's own cost, against memcpy on this host
            std::vector<uint8_t> copy(bytes);
            const auto copy_start = Clock::now();
            std::memcpy(copy.data(), data.data(), bytes);
            const double copy_s = std::chrono::duration<double>(Clock::now() - copy_start).count();
            WARN("64 MiB over a link in "
                 << seconds * 1e3 << " ms wall: " << double(bytes) / seconds / 1e6
                 << " MB/s; memcpy " << double(bytes) / copy_s / 1e6 << " MB/s");
        }
        REQUIRE(results[0].status == TPU_ERR_NONE);
        REQUIRE(results[1].status == TPU_ERR_NONE);
        std::vector<uint8_t> got(bytes);
        rig.space(1).read(kDst, got.data(), bytes);
        CHECK(got == data);

        // Both jobs start at cycle 0: the RECV ends when the message has arrived.
        const uint64_t model = tpu::engine::cycles::link_transfer(1, bytes, 700, 400, 1000);
        CHECK(results[1].cycles == model);
        const double exact = exact_cycles(1, bytes, 700, 400, 1000);
        CHECK(std::abs(double(results[1].cycles) - exact) / exact < 0.01);
        CHECK(results[0].link_tx_bytes == bytes);
        CHECK(results[1].link_rx_bytes == bytes);
        CHECK(results[0].link_cycles == tpu::engine::cycles::link_serialise(bytes, 700, 400));
        CHECK(results[1].link_cycles == model);
        CHECK(results[0].dma_read_bytes == bytes);
        CHECK(results[1].dma_write_bytes == bytes);
    }
    const tpu_link_port_info tx = port_info(rig.engine(0), 0);
    const tpu_link_port_info rx = port_info(rig.engine(1), 1);
    CHECK(tx.up);
    CHECK(tx.peer_x == 1);
    CHECK(tx.peer_port == 1);
    CHECK(tx.tx_bytes == rx.rx_bytes);
    CHECK(tx.tx_packets == rx.rx_packets);
    CHECK(rx.rx_queued == 0);
    CHECK(tx.errors == 0);
}

TEST_CASE("link: a torus's y links cost their own figures (spec 2.4)", "[link]") {
    const uint32_t mode = GENERATE(TPU_ENGINE_FAST, TPU_ENGINE_CYCLE_ACCURATE);
    constexpr uint32_t kBytes = 1u << 20;
    // y links 100 Gbit/s, 5 us a hop (a pod's links between servers); x links 400, 1 us.
    LinkRig rig(tpu_fabric_config{TPU_ICI_TOPO_TORUS2D, 2, 2, 400, 1000, 256, 100, 5000}, mode,
                2 * kBytes);
    tpu_link_info info;
    tpu_engine_link_info(rig.engine(0), &info);
    CHECK(info.link_gbps == 400);
    CHECK(info.y_link_gbps == 100);
    CHECK(info.y_hop_ns == 5000);
    const std::vector<uint8_t> data = random_bytes(kBytes, 3);
    rig.space(0).write(LinkRig::kHost, data.data(), kBytes);
    // Card (0,0) sends over +x to (1,0) (index 1), then over +y to (0,1) (index 2).
    for (const uint32_t port : {0u, 2u}) {
        const uint32_t to = port == 0 ? 1 : 2;
        std::vector<Program> programs(4, Program{halt()});
        programs[0] = {send(port, 1, LinkRig::kHost, kBytes, TPU_F_LINK_HOST), halt()};
        programs[to] = {
            recv(port ^ 1, 1, LinkRig::kHost, kBytes, TPU_LINK_COPY, 0, TPU_F_LINK_HOST), halt()};
        const auto results = rig.run_all(programs);
        for (const tpu_job_result &r : results)
            REQUIRE(r.status == TPU_ERR_NONE);
        std::vector<uint8_t> got(kBytes);
        rig.space(to).read(LinkRig::kHost, got.data(), kBytes);
        CHECK(got == data);
        CHECK(results[to].cycles ==
              (port == 0 ? tpu::engine::cycles::link_transfer(1, kBytes, 700, 400, 1000)
                         : tpu::engine::cycles::link_transfer(1, kBytes, 700, 100, 5000)));
    }

    // Only a torus has y links of their own; their figures are checked like the x links'.
    char err[256] = "";
    for (const tpu_fabric_config &bad :
         {tpu_fabric_config{TPU_ICI_TOPO_RING, 4, 1, 400, 1000, 256, 100, 0},
          tpu_fabric_config{TPU_ICI_TOPO_TORUS2D, 2, 2, 400, 1000, 256, 2000000, 0},
          tpu_fabric_config{TPU_ICI_TOPO_TORUS2D, 2, 2, 400, 1000, 256, 0, 2000000000}}) {
        CHECK(tpu_fabric_create(&bad, err, sizeof(err)) == nullptr);
        CHECK(std::string(err).find("y links") != std::string::npos);
    }
}

TEST_CASE("link: a receiver that is not ready stalls the sender and no data is lost", "[link]") {
    constexpr uint32_t kCredits = 4;
    constexpr uint32_t kBytes = 1u << 20;
    LinkRig rig(LinkRig::ring(2, kCredits), TPU_ENGINE_FAST);
    const std::vector<uint8_t> data = random_bytes(kBytes, 1);
    rig.space(0).write(LinkRig::kHost, data.data(), kBytes);

    auto sender = std::async(std::launch::async, [&] {
        return rig.run(0, {send(0, 1, LinkRig::kHost, kBytes, TPU_F_LINK_HOST), halt()});
    });
    // The receiver's buffer fills up and the SEND waits for credits.
    REQUIRE(eventually([&] { return port_info(rig.engine(1), 1).rx_queued == kCredits; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(sender.wait_for(std::chrono::seconds(0)) == std::future_status::timeout);
    CHECK(port_info(rig.engine(1), 1).rx_queued == kCredits);

    const tpu_job_result r =
        rig.run(1, {recv(1, 1, LinkRig::kHost, kBytes, TPU_LINK_COPY, 0, TPU_F_LINK_HOST), halt()});
    CHECK(r.status == TPU_ERR_NONE);
    CHECK(sender.get().status == TPU_ERR_NONE);
    std::vector<uint8_t> got(kBytes);
    rig.space(1).read(LinkRig::kHost, got.data(), kBytes);
    CHECK(got == data);
    CHECK(port_info(rig.engine(0), 0).tx_packets == kBytes / TPU_ICI_PACKET_BYTES);
    CHECK(port_info(rig.engine(1), 1).rx_packets == kBytes / TPU_ICI_PACKET_BYTES);
}

TEST_CASE("link: an abort ends a RECV waiting for data at once", "[link][abort]") {
    LinkRig rig(LinkRig::ring(2), TPU_ENGINE_FAST);
    AbortWhenRunning abort(rig.engine(1), 1);
    const tpu_job_result r = rig.run(1, {recv(1, 1, 0, 4096), halt()});
    abort.job_ended();
    REQUIRE(abort.aborted());
    CHECK(r.status == TPU_ERR_ABORTED);
    CHECK(r.error_pc == 0);
    CHECK(Clock::now() - abort.abort_time() < std::chrono::seconds(2));
    CHECK(port_info(rig.engine(1), 1).errors == 0); // an abort is no link error
    // The card works on after its reset, links and all.
    tpu_engine_reset(rig.engine(1));
    const auto results = rig.run_all({{send(0, 2, 0, 64), halt()}, {recv(1, 2, 0, 64), halt()}});
    CHECK(results[0].status == TPU_ERR_NONE);
    CHECK(results[1].status == TPU_ERR_NONE);
}

TEST_CASE("link: an abort ends a SEND waiting for credits and the receiver sees the message cut",
          "[link][abort]") {
    constexpr uint32_t kCredits = 2;
    constexpr uint32_t kBytes = 64 * 1024;
    LinkRig rig(LinkRig::ring(2, kCredits), TPU_ENGINE_FAST);
    auto sender = std::async(std::launch::async, [&] {
        return rig.run(0, {send(0, 3, 0, kBytes), halt()});
    });
    // Aborted once both packets its credits allow are out and it waits for more (an abort before
    // the first packet would leave no message for the receiver to see cut).
    REQUIRE(eventually([&] { return port_info(rig.engine(1), 1).rx_queued == kCredits; }));
    const auto abort_time = Clock::now();
    tpu_engine_abort(rig.engine(0));
    REQUIRE(sender.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
    CHECK(Clock::now() - abort_time < std::chrono::seconds(2));
    const tpu_job_result r = sender.get();
    CHECK(r.status == TPU_ERR_ABORTED);
    tpu_engine_reset(rig.engine(0));

    // The two packets that went out are all there is of the message.
    tpu_job_result cut = rig.run(1, {recv(1, 3, 0, kBytes), halt()});
    CHECK(cut.status == TPU_ERR_LINK_PARTIAL);
    const tpu_link_port_info info = port_info(rig.engine(1), 1);
    CHECK(info.errors == 1);
    CHECK(info.error);
    CHECK(info.rx_queued == 0);
    // The next message goes through whole.
    const auto results =
        rig.run_all({{send(0, 4, 0, kBytes), halt()}, {recv(1, 4, 0, kBytes), halt()}});
    CHECK(results[0].status == TPU_ERR_NONE);
    CHECK(results[1].status == TPU_ERR_NONE);
}

TEST_CASE("link: a RECV waiting on a peer that leaves ends LINK_DOWN", "[link]") {
    LinkRig rig(LinkRig::ring(2), TPU_ENGINE_FAST);
    auto receiver = std::async(std::launch::async, [&] {
        return rig.run(1, {recv(1, 1, 0, 4096), halt()});
    });
    REQUIRE(eventually([&] { return tpu_engine_progress(rig.engine(1)) >= 1; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    tpu_engine_detach(rig.engine(0));
    REQUIRE(receiver.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
    const tpu_job_result r = receiver.get();
    CHECK(r.status == TPU_ERR_LINK_DOWN);
    CHECK(r.error_pc == 0);
    CHECK_FALSE(port_info(rig.engine(1), 1).up);
    CHECK(port_info(rig.engine(1), 1).error);
    // Its SENDs fail at once too, and so do the departed card's.
    CHECK(rig.run(1, {send(0, 1, 0, 64), halt()}).status == TPU_ERR_LINK_DOWN);
    CHECK(rig.run(0, {send(0, 1, 0, 64), halt()}).status == TPU_ERR_LINK_DOWN);

    // Back on the fabric, the link works again.
    char err[128];
    REQUIRE(tpu_engine_attach(rig.engine(0), rig.fabric.get(), 0, 0, err, sizeof(err)) == 0);
    const auto results = rig.run_all({{send(0, 2, 0, 64), halt()}, {recv(1, 2, 0, 64), halt()}});
    CHECK(results[0].status == TPU_ERR_NONE);
    CHECK(results[1].status == TPU_ERR_NONE);
}

TEST_CASE("link: a tag or length that does not match the message waiting is LINK_MISMATCH",
          "[link]") {
    LinkRig rig(LinkRig::ring(2), TPU_ENGINE_FAST);
    REQUIRE(rig.run(0, {send(0, 5, 0, 256), halt()}).status == TPU_ERR_NONE);
    tpu_job_result r = rig.run(1, {recv(1, 6, 0, 256), halt()});
    CHECK(r.status == TPU_ERR_LINK_MISMATCH);
    r = rig.run(1, {recv(1, 5, 0, 128), halt()});
    CHECK(r.status == TPU_ERR_LINK_MISMATCH);
    CHECK(port_info(rig.engine(1), 1).errors == 2);
    // The message stays for a RECV that matches it.
    CHECK(rig.run(1, {recv(1, 5, 0, 256), halt()}).status == TPU_ERR_NONE);
}

TEST_CASE("link: a RECV with SKIP_STALE drops the messages of other tags before its own",
          "[link]") {
    const uint32_t mode = GENERATE(TPU_ENGINE_FAST, TPU_ENGINE_CYCLE_ACCURATE);
    LinkRig rig(LinkRig::ring(2), mode);
    constexpr uint64_t kHost = LinkRig::kHost;
    constexpr uint16_t kSkip = TPU_F_LINK_SKIP_STALE, kHostFlag = TPU_F_LINK_HOST;
    // Left behind by a failed job: a message of 3 packets and one of 1; then the next job's.
    REQUIRE(rig.run(0, {send(0, 7, 0, 8192 + 100), send(0, 8, 0, 64), halt()}).status ==
            TPU_ERR_NONE);
    const std::vector<uint8_t> data = random_bytes(4096, 11);
    rig.space(0).write(kHost, data.data(), data.size());
    REQUIRE(rig.run(0, {send(0, 9, kHost, 4096, kHostFlag), halt()}).status == TPU_ERR_NONE);
    CHECK(port_info(rig.engine(1), 1).rx_queued == 5);
    // Without the flag the stale message is in the way; with it, it and the next are dropped.
    CHECK(rig.run(1, {recv(1, 9, kHost, 4096, TPU_LINK_COPY, 0, kHostFlag), halt()}).status ==
          TPU_ERR_LINK_MISMATCH);
    const tpu_job_result r =
        rig.run(1, {recv(1, 9, kHost, 4096, TPU_LINK_COPY, 0, kHostFlag | kSkip), halt()});
    CHECK(r.status == TPU_ERR_NONE);
    CHECK(r.link_rx_bytes == 4096);
    std::vector<uint8_t> got(4096);
    rig.space(1).read(kHost, got.data(), got.size());
    CHECK(got == data);
    CHECK(port_info(rig.engine(1), 1).rx_queued == 0);
    CHECK(port_info(rig.engine(1), 1).rx_packets == 5); // 4 dropped, 1 taken
    CHECK(port_info(rig.engine(1), 1).rx_bytes == 4096);
    // A message of its tag but another length is still LINK_MISMATCH, and stays.
    REQUIRE(rig.run(0, {send(0, 9, 0, 64), halt()}).status == TPU_ERR_NONE);
    CHECK(rig.run(1, {recv(1, 9, 0, 128, TPU_LINK_COPY, 0, kSkip), halt()}).status ==
          TPU_ERR_LINK_MISMATCH);
    CHECK(port_info(rig.engine(1), 1).rx_queued == 1);
}

TEST_CASE("link: a SEND whose host source faults part-way cuts its message", "[link]") {
    LinkRig rig(LinkRig::ring(2), TPU_ENGINE_FAST);
    constexpr uint64_t kVa = 0x40000000;
    rig.space(0).map(kVa, 4096, kRead); // the second page is not mapped
    tpu_job_result r = rig.run(0, {send(0, 1, kVa, 8192, TPU_F_LINK_HOST), halt()});
    CHECK(r.status == TPU_ERR_MMU_FAULT);
    CHECK(r.fault_addr == kVa + 4096);
    CHECK(rig.run(1, {recv(1, 1, 0, 8192), halt()}).status == TPU_ERR_LINK_PARTIAL);
}

TEST_CASE("link: a reset drops the messages waiting in the card's receive buffers", "[link]") {
    LinkRig rig(LinkRig::ring(2), TPU_ENGINE_FAST);
    REQUIRE(rig.run(0, {send(0, 1, 0, 8192), send(0, 2, 0, 64), halt()}).status == TPU_ERR_NONE);
    CHECK(port_info(rig.engine(1), 1).rx_queued == 3);
    tpu_engine_reset(rig.engine(1));
    CHECK(port_info(rig.engine(1), 1).rx_queued == 0);
    CHECK(port_info(rig.engine(1), 1).rx_packets == 3);
    const auto results = rig.run_all({{send(0, 3, 0, 64), halt()}, {recv(1, 3, 0, 64), halt()}});
    CHECK(results[1].status == TPU_ERR_NONE);
    tpu_engine_link_clear(rig.engine(1));
    CHECK(port_info(rig.engine(1), 1).rx_packets == 0);
}

TEST_CASE("link: malformed link instructions end with a clear status", "[link]") {
    LinkRig rig(LinkRig::ring(2), TPU_ENGINE_FAST);
    const uint32_t ub = LinkRig::kUb;
    auto status = [&](tpu_insn insn) { return rig.run(0, {insn, halt()}).status; };

    CHECK(status(send(2, 1, 0, 64)) == TPU_ERR_LINK_DOWN); // a ring has ports 0 and 1
    CHECK(status(recv(7, 1, 0, 64)) == TPU_ERR_LINK_DOWN);
    CHECK(status(send(8, 1, 0, 64)) == TPU_ERR_BAD_OPERAND); // no such port number
    CHECK(status(send(0, 1, 0, 0)) == TPU_ERR_BAD_OPERAND);
    CHECK(status(send(0, 1, 0, TPU_ICI_MAX_BYTES + 1, TPU_F_LINK_HOST)) == TPU_ERR_BAD_OPERAND);
    CHECK(status(recv(0, 1, 0, 64, 4, TPU_DT_FP32)) == TPU_ERR_BAD_OPERAND); // reduce op
    CHECK(status(recv(0, 1, 0, 64, TPU_LINK_SUM, TPU_DT_INT8)) == TPU_ERR_BAD_OPERAND);
    CHECK(status(recv(0, 1, 0, 64, TPU_LINK_COPY, TPU_DT_FP32)) == TPU_ERR_BAD_OPERAND);
    CHECK(status(recv(0, 1, 2, 64, TPU_LINK_SUM, TPU_DT_FP32)) == TPU_ERR_BAD_OPERAND); // align
    CHECK(status(recv(0, 1, 0, 66, TPU_LINK_SUM, TPU_DT_FP32)) == TPU_ERR_BAD_OPERAND); // length
    CHECK(status(send(0, 1, 0, 64, TPU_LINK_SUM)) == TPU_ERR_BAD_OPERAND); // SEND reduces not
    CHECK(status(send(0, 1, 0, 64, TPU_F_LINK_SKIP_STALE)) == TPU_ERR_BAD_OPERAND); // RECV only
    CHECK(status(recv(0, 1, 0, 64, TPU_LINK_COPY, 0, 1u << 6)) == TPU_ERR_BAD_OPERAND);
    tpu_insn dtype = send(0, 1, 0, 64);
    dtype.link.dtype = TPU_DT_FP32;
    CHECK(status(dtype) == TPU_ERR_BAD_OPERAND);
    for (unsigned field = 0; field < 3; field++) {
        tpu_insn bad = send(0, 1, 0, 64);
        if (field == 0)
            bad.link.reserved0 = 1;
        else if (field == 1)
            bad.link.reserved1 = 1;
        else
            bad.link.reserved2 = 1;
        CHECK(status(bad) == TPU_ERR_BAD_OPERAND);
    }
    tpu_job_result r = rig.run(0, {nop(), send(0, 1, ub - 32, 64), halt()});
    CHECK(r.status == TPU_ERR_UB_RANGE);
    CHECK(r.fault_addr == ub);
    CHECK(r.error_pc == 1);
    r = rig.run(0, {recv(0, 1, uint64_t(ub) + 4096, 64), halt()});
    CHECK(r.status == TPU_ERR_UB_RANGE);
    CHECK(r.fault_addr == uint64_t(ub) + 4096);
    // Nothing went out.
    CHECK(port_info(rig.engine(0), 0).tx_packets == 0);
    CHECK(port_info(rig.engine(1), 1).rx_queued == 0);
}

TEST_CASE("link: a card without a fabric has no links", "[link]") {
    Rig rig(TPU_ENGINE_FAST);
    CHECK(rig.run({send(0, 1, 0, 64), halt()}).status == TPU_ERR_LINK_DOWN);
    CHECK(rig.run({recv(0, 1, 0, 64), halt()}).status == TPU_ERR_LINK_DOWN);
    tpu_link_info info;
    tpu_engine_link_info(rig.card.engine(), &info);
    CHECK(info.ports == 0);
    tpu_link_port_info port;
    CHECK_FALSE(tpu_engine_port_info(rig.card.engine(), 0, &port));
}

TEST_CASE("link: fabric configurations and places are checked", "[link]") {
    char err[256] = "";
    auto make = [&](tpu_fabric_config cfg) {
        tpu_fabric *f = tpu_fabric_create(&cfg, err, sizeof(err));
        const bool ok = f != nullptr;
        tpu_fabric_destroy(f);
        return ok;
    };
    CHECK(make({TPU_ICI_TOPO_RING, 4, 1, 400, 1000, 256, 0, 0}));
    CHECK(make({TPU_ICI_TOPO_TORUS2D, 2, 2, 360, 1000, 256, 0, 0}));
    CHECK_FALSE(make({0, 4, 1, 400, 1000, 256, 0, 0}));
    CHECK_FALSE(make({3, 4, 1, 400, 1000, 256, 0, 0}));
    CHECK_FALSE(make({TPU_ICI_TOPO_RING, 1, 1, 400, 1000, 256, 0, 0}));
    CHECK_FALSE(make({TPU_ICI_TOPO_RING, 65, 1, 400, 1000, 256, 0, 0}));
    CHECK_FALSE(make({TPU_ICI_TOPO_RING, 4, 2, 400, 1000, 256, 0, 0}));
    CHECK_FALSE(make({TPU_ICI_TOPO_TORUS2D, 4, 1, 400, 1000, 256, 0, 0}));
    CHECK_FALSE(make({TPU_ICI_TOPO_RING, 4, 1, 0, 1000, 256, 0, 0}));
    CHECK_FALSE(make({TPU_ICI_TOPO_RING, 4, 1, 400, 1000, 1, 0, 0}));
    CHECK(std::string(err).find("credits") != std::string::npos);

    LinkRig rig(tpu_fabric_config{TPU_ICI_TOPO_TORUS2D, 2, 2, 400, 1000, 16, 0, 0},
                TPU_ENGINE_FAST);
    tpu_link_info info;
    tpu_engine_link_info(rig.engine(3), &info);
    CHECK(info.ports == 4);
    CHECK(info.topology == TPU_ICI_TOPO_TORUS2D);
    CHECK(info.x == 1);
    CHECK(info.y == 1);
    CHECK(port_info(rig.engine(3), 2).peer_y == 0); // +y wraps around
    CHECK(port_info(rig.engine(3), 0).peer_x == 0);

    HostMemory mem(64ull << 20);
    tpu_engine_config ec = Rig::config(TPU_ENGINE_FAST);
    ec.clock_mhz = 700;
    Card card(mem, ec);
    CHECK(tpu_engine_attach(card.engine(), rig.fabric.get(), 1, 1, err, sizeof(err)) == -1);
    CHECK(std::string(err).find("already has that coordinate") != std::string::npos);
    tpu_engine_detach(rig.engine(3));
    CHECK(tpu_engine_attach(card.engine(), rig.fabric.get(), 2, 0, err, sizeof(err)) == -1);
    CHECK(std::string(err).find("outside") != std::string::npos);
    ec.clock_mhz = 940;
    Card other_clock(mem, ec);
    CHECK(tpu_engine_attach(other_clock.engine(), rig.fabric.get(), 1, 1, err, sizeof(err)) == -1);
    CHECK(std::string(err).find("clock") != std::string::npos);
    REQUIRE(tpu_engine_attach(card.engine(), rig.fabric.get(), 1, 1, err, sizeof(err)) == 0);
    CHECK(tpu_engine_attach(card.engine(), rig.fabric.get(), 1, 1, err, sizeof(err)) == -1);
    CHECK(port_info(card.engine(), 3).up);
}
